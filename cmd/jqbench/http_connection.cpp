#include "cmd/jqbench/http_connection.hpp"

#include <array>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace jq::bench {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using asio::ip::tcp;

namespace {

// A long-polled result (?wait=) answers within its wait; every other request within a second.
constexpr std::chrono::seconds kRequestTimeout{60};
constexpr std::uint64_t kMaxResponseBytes = 64 * 1024 * 1024;
constexpr std::string_view kMsgpack = "application/msgpack";
constexpr std::string_view kJson = "application/json";

std::string_view method_name(Method m) {
  switch (m) {
    case Method::get:
      return "GET";
    case Method::post:
      return "POST";
    case Method::del:
      return "DELETE";
  }
  return "GET";
}

}  // namespace

struct HttpConnection::Impl {
  Impl(asio::any_io_executor executor, tcp::endpoint e, std::string h, std::string b)
      : stream(std::move(executor)), endpoint(e), host(std::move(h)), base(std::move(b)) {}

  // One try: connects first when needed. An error leaves the connection closed.
  asio::awaitable<HttpResponse> exchange(const std::string& head, const std::string& body) {
    boost::system::error_code ec;
    auto on_error = asio::redirect_error(asio::use_awaitable, ec);
    stream.expires_after(kRequestTimeout);
    if (!connected) {
      co_await stream.async_connect(endpoint, on_error);
      if (!ec) stream.socket().set_option(tcp::no_delay(true), ec);
      connected = !ec;
    }
    const std::array<asio::const_buffer, 2> request{asio::buffer(head), asio::buffer(body)};
    if (!ec) co_await asio::async_write(stream, request, on_error);
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(kMaxResponseBytes);
    if (!ec) co_await bhttp::async_read(stream, buffer, parser, on_error);
    if (ec) {
      close();
      co_return HttpResponse{0, {}, ec.message()};
    }
    if (!parser.get().keep_alive()) close();
    co_return HttpResponse{
        static_cast<int>(parser.get().result_int()), std::move(parser.get().body()), {}};
  }

  void close() {
    boost::system::error_code ignored;
    stream.socket().close(ignored);
    buffer.clear();
    connected = false;
  }

  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  tcp::endpoint endpoint;
  std::string host;
  std::string base;
  bool connected = false;
};

HttpConnection::HttpConnection(asio::any_io_executor executor, tcp::endpoint master,
                               std::string host, std::string base)
    : impl_(std::make_unique<Impl>(std::move(executor), master, std::move(host), std::move(base))) {
}

HttpConnection::~HttpConnection() = default;

asio::awaitable<HttpResponse> HttpConnection::request(Method method, std::string path,
                                                      std::string body, bool json) {
  // The head written by hand, as Beast's serializer would (HTTP/1.1 keeps the connection alive
  // without a Connection header): the serializer took about a tenth of this client's CPU per
  // single push.
  const std::string_view type = json ? kJson : kMsgpack;
  std::string head;
  head.reserve(128 + impl_->base.size() + path.size() + impl_->host.size());
  head.append(method_name(method)).append(" ").append(impl_->base).append(path);
  head.append(" HTTP/1.1\r\nHost: ").append(impl_->host);
  head.append("\r\nAccept: ").append(type);
  if (!body.empty() || method == Method::post) {
    if (!body.empty()) head.append("\r\nContent-Type: ").append(type);
    head.append("\r\nContent-Length: ").append(std::to_string(body.size()));
  }
  head.append("\r\n\r\n");
  const bool reused = impl_->connected;
  HttpResponse response = co_await impl_->exchange(head, body);
  if (response.status == 0 && reused) response = co_await impl_->exchange(head, body);
  co_return response;
}

tcp::endpoint resolve_master(const std::string& host, std::uint16_t port) {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (!ec) return tcp::endpoint(address, port);
  asio::io_context io;
  tcp::resolver resolver(io);
  const auto results = resolver.resolve(host, std::to_string(port));  // throws when it cannot
  return results.begin()->endpoint();
}

}  // namespace jq::bench
