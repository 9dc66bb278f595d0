#include "cmd/jqbench/http_connection.hpp"

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

bhttp::verb to_verb(Method m) {
  switch (m) {
    case Method::get:
      return bhttp::verb::get;
    case Method::post:
      return bhttp::verb::post;
    case Method::del:
      return bhttp::verb::delete_;
  }
  return bhttp::verb::get;
}

}  // namespace

struct HttpConnection::Impl {
  Impl(asio::any_io_executor executor, tcp::endpoint e, std::string h, std::string b)
      : stream(std::move(executor)), endpoint(e), host(std::move(h)), base(std::move(b)) {}

  // One try: connects first when needed. An error leaves the connection closed.
  asio::awaitable<HttpResponse> exchange(bhttp::request<bhttp::string_body>& req) {
    boost::system::error_code ec;
    auto on_error = asio::redirect_error(asio::use_awaitable, ec);
    stream.expires_after(kRequestTimeout);
    if (!connected) {
      co_await stream.async_connect(endpoint, on_error);
      if (!ec) stream.socket().set_option(tcp::no_delay(true), ec);
      connected = !ec;
    }
    if (!ec) co_await bhttp::async_write(stream, req, on_error);
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
  bhttp::request<bhttp::string_body> req{to_verb(method), impl_->base + path, 11};
  req.set(bhttp::field::host, impl_->host);
  req.set(bhttp::field::accept, json ? kJson : kMsgpack);
  if (!body.empty()) req.set(bhttp::field::content_type, json ? kJson : kMsgpack);
  req.body() = std::move(body);
  req.keep_alive(true);
  req.prepare_payload();
  const bool reused = impl_->connected;
  HttpResponse response = co_await impl_->exchange(req);
  if (response.status == 0 && reused) response = co_await impl_->exchange(req);
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
