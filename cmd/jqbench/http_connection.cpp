#include "cmd/jqbench/http_connection.hpp"

#include <array>
#include <charconv>
#include <optional>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include "common/ascii.hpp"
#include "common/expected.hpp"
#include "common/send_now.hpp"
#include "common/socket_deadline.hpp"

namespace jq::bench {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

// A long-polled result (?wait=) answers within its wait; every other request within a second.
constexpr std::chrono::seconds kRequestTimeout{60};
// How often a connection's deadline timer looks while a request is on its way.
constexpr std::chrono::seconds kDeadlineTick{1};
constexpr std::size_t kMaxHeadBytes = 64 * 1024;
constexpr std::size_t kMaxResponseBytes = 64 * 1024 * 1024;
constexpr std::size_t kReadSize = 16 * 1024;
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

// A response's head: what this client needs of it.
struct ResponseHead {
  std::size_t size = 0;  // bytes up to and including the blank line
  int status = 0;
  std::size_t content_length = 0;
  bool close = false;  // the server closes the connection after this response
};

// The head at the start of `in`: nullopt while it is not whole yet; an error for what this
// client does not read (the master answers HTTP/1.1 with a Content-Length, never chunked).
Expected<std::optional<ResponseHead>, std::string> parse_head(std::string_view in) {
  const std::size_t end = in.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    if (in.size() > kMaxHeadBytes) return unexpected(std::string("response head too long"));
    return std::optional<ResponseHead>();
  }
  ResponseHead head;
  head.size = end + 4;
  std::string_view lines = in.substr(0, end + 2);
  std::size_t eol = lines.find("\r\n");
  const std::string_view status_line = lines.substr(0, eol);
  if (status_line.size() < 12 || !status_line.starts_with("HTTP/1.") || status_line[8] != ' ') {
    return unexpected("not an HTTP/1.x response: " + std::string(status_line.substr(0, 40)));
  }
  std::from_chars(status_line.data() + 9, status_line.data() + 12, head.status);
  head.close = status_line.starts_with("HTTP/1.0");
  bool has_length = false;
  for (lines.remove_prefix(eol + 2); !lines.empty(); lines.remove_prefix(eol + 2)) {
    eol = lines.find("\r\n");
    const std::string_view line = lines.substr(0, eol);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = trim_ows(line.substr(colon + 1));
    if (ascii_iequals(name, "content-length")) {
      const auto [p, ec] =
          std::from_chars(value.data(), value.data() + value.size(), head.content_length);
      if (ec != std::errc() || p != value.data() + value.size()) {
        return unexpected("bad Content-Length: " + std::string(value));
      }
      has_length = true;
    } else if (ascii_iequals(name, "connection")) {
      if (ascii_iequals(value, "close")) head.close = true;
      if (ascii_iequals(value, "keep-alive")) head.close = false;
    } else if (ascii_iequals(name, "transfer-encoding")) {
      return unexpected(std::string("a chunked response: the master always sends Content-Length"));
    }
  }
  if (!has_length && head.status != 204 && head.status != 304) {
    return unexpected(std::string("a response without Content-Length"));
  }
  if (head.content_length > kMaxResponseBytes) {
    return unexpected(std::string("response body over 64 MiB"));
  }
  return std::optional<ResponseHead>(head);
}

}  // namespace

// A plain socket with a hand-read response and one deadline timer (common/socket_deadline.hpp):
// Beast's tcp_stream armed and cancelled a timer for every read and write, and its parser
// allocated every header field. On two cores every µs this load generator spends is taken from
// the master, Redis and the worker it measures (row b, docs/BENCHMARKS.md).
struct HttpConnection::Impl {
  Impl(asio::any_io_executor executor, tcp::endpoint e, std::string h, std::string b)
      : socket(std::move(executor)),
        deadline(std::make_shared<SocketDeadline>(socket, kDeadlineTick)),
        endpoint(e),
        host(std::move(h)),
        base(std::move(b)) {}
  ~Impl() { deadline->stop(); }

  // One try: connects first when needed. An error leaves the connection closed.
  asio::awaitable<HttpResponse> exchange(const std::string& head, const std::string& body) {
    boost::system::error_code ec;
    auto on_error = asio::redirect_error(asio::use_awaitable, ec);
    const auto until = Clock::now() + kRequestTimeout;
    deadline->expire_at(until);
    if (!connected) {
      co_await socket.async_connect(endpoint, on_error);
      if (!ec) socket.set_option(tcp::no_delay(true), ec);
      connected = !ec;
    }
    const std::array<asio::const_buffer, 2> request{asio::buffer(head), asio::buffer(body)};
    if (!ec) {
      const auto unwritten = send_now(socket.native_handle(), request, ec);
      if (!ec && asio::buffer_size(unwritten) > 0) {
        co_await asio::async_write(socket, unwritten, on_error);
      }
    }
    std::optional<ResponseHead> parsed;
    std::string error;
    while (!ec) {
      const std::string_view in(static_cast<const char*>(buffer.data().data()), buffer.size());
      if (!parsed) {
        auto got = parse_head(in);
        if (!got) {
          error = std::move(got.error());
          break;
        }
        parsed = *got;
      }
      if (parsed && in.size() >= parsed->size + parsed->content_length) break;
      const std::size_t n = co_await socket.async_read_some(buffer.prepare(kReadSize), on_error);
      buffer.commit(n);
    }
    deadline->expire_never();
    if (ec || !error.empty()) {
      if (ec && Clock::now() >= until) {
        error = "no answer within " + std::to_string(kRequestTimeout.count()) + " s";
      }
      close();
      co_return HttpResponse{0, {}, error.empty() ? ec.message() : error};
    }
    const char* data = static_cast<const char*>(buffer.data().data());
    HttpResponse response{
        parsed->status, std::string(data + parsed->size, parsed->content_length), {}};
    buffer.consume(parsed->size + parsed->content_length);
    if (parsed->close) close();
    co_return response;
  }

  void close() {
    boost::system::error_code ignored;
    socket.close(ignored);
    buffer.clear();
    connected = false;
  }

  tcp::socket socket;
  std::shared_ptr<SocketDeadline> deadline;  // its timer holds it weakly
  beast::flat_buffer buffer;                 // what was read and not yet consumed
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
