#include "src/http/server.hpp"

#include <atomic>
#include <mutex>
#include <set>
#include <system_error>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "api/query.hpp"
#include "src/http/respond.hpp"
#include "src/log/event.hpp"

namespace jq::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using asio::use_awaitable;
using asio::ip::tcp;
using Parser = bhttp::request_parser<bhttp::string_body>;

namespace {

constexpr std::uint32_t kHeaderLimit = 16 * 1024;
// After refusing a request whose body we will not read, keep reading (and discarding) for a
// while so the client gets to read our answer instead of a connection reset.
constexpr std::size_t kDrainLimit = 8 * 1024 * 1024;
constexpr std::chrono::seconds kDrainTimeout{2};

Method to_method(bhttp::verb verb) {
  switch (verb) {
    case bhttp::verb::get:
      return Method::get;
    case bhttp::verb::post:
      return Method::post;
    case bhttp::verb::put:
      return Method::put;
    case bhttp::verb::patch:
      return Method::patch;
    case bhttp::verb::delete_:
      return Method::del;
    case bhttp::verb::head:
      return Method::head;
    default:
      return Method::other;
  }
}

// Fills everything but the body from a parsed header.
bool fill_request_header(const bhttp::request_header<>& header, Request& out) {
  out.method = to_method(header.method());
  std::string_view target = header.target();
  auto q = target.find('?');
  out.query = q == std::string_view::npos ? std::string() : std::string(target.substr(q + 1));
  auto path = api::percent_decode(target.substr(0, q), false);
  out.content_type = std::string(header[bhttp::field::content_type]);
  out.accept = std::string(header[bhttp::field::accept]);
  out.authorization = std::string(header[bhttp::field::authorization]);
  out.traceparent = std::string(header["traceparent"]);
  if (!path) return false;
  out.path = std::move(*path);
  return true;
}

bhttp::response<bhttp::string_body> to_beast(Response&& r, unsigned version, bool keep_alive,
                                             bool head) {
  bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(r.status), version};
  res.set(bhttp::field::server, "jqmaster");
  if (!r.content_type.empty()) res.set(bhttp::field::content_type, r.content_type);
  for (auto& [name, value] : r.headers) res.set(name, value);
  if (!head) res.body() = std::move(r.body);
  res.keep_alive(keep_alive);
  res.prepare_payload();
  if (head) res.content_length(r.body.size());
  return res;
}

bool is_quiet_end(const boost::system::error_code& ec) {
  return ec == bhttp::error::end_of_stream || ec == asio::error::operation_aborted ||
         ec == beast::error::timeout || ec == asio::error::connection_reset ||
         ec == asio::error::eof || ec == asio::error::bad_descriptor;
}

// "Expect: 100-continue" with a body we are willing to read: the client waits for our go-ahead.
bool wants_continue(Parser& parser, std::size_t max_body_bytes) {
  return beast::iequals(parser.get()[bhttp::field::expect], "100-continue") &&
         !(parser.content_length() && *parser.content_length() > max_body_bytes);
}

void log_access(const Request& req, int status, std::chrono::steady_clock::time_point started) {
  log::event(spdlog::level::info, "http request",
             {{"method", to_string(req.method)},
              {"path", req.path},
              {"status", status},
              {"duration_ms",
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                   .count()}});
}

}  // namespace

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
  // What shutdown needs to reach a connection: its strand, its socket and whether it is between
  // requests. `idle` and the socket are only touched on the connection's strand.
  struct Connection {
    explicit Connection(tcp::socket s) : stream(std::move(s)) {}
    beast::tcp_stream stream;
    bool idle = true;
  };

  Impl(asio::io_context& io, ServerOptions o, RequestHandler h)
      : io(io), options(std::move(o)), handler(std::move(h)), acceptor(io) {}

  asio::io_context& io;
  ServerOptions options;
  RequestHandler handler;
  tcp::acceptor acceptor;
  std::atomic<bool> closing{false};
  std::atomic<std::size_t> open{0};
  std::mutex mutex;
  std::set<std::shared_ptr<Connection>> connections;

  // What reading one request came to: a request to handle, a refusal (answer an error, then
  // close), or a quiet end (the client left, or the connection timed out).
  struct ReadOutcome {
    enum class Kind { handle, refuse, end };
    Kind kind = Kind::handle;
    api::ErrorCode code{};
    std::string message;
  };

  asio::awaitable<void> accept_loop();
  asio::awaitable<void> serve(std::shared_ptr<Connection> c);
  asio::awaitable<ReadOutcome> read_request(Connection& c, beast::flat_buffer& buffer,
                                            Parser& parser, Request& req);
  asio::awaitable<boost::system::error_code> read_body(Connection& c, beast::flat_buffer& buffer,
                                                       Parser& parser);
  ReadOutcome outcome_of(const boost::system::error_code& ec) const;
  asio::awaitable<bool> answer(Connection& c, Parser::value_type& msg, Request& req);
  asio::awaitable<Response> handle(Request& req);
  asio::awaitable<void> refuse(std::shared_ptr<Connection> c, Request req, api::ErrorCode code,
                               std::string message);
  asio::awaitable<bool> write(Connection& c, Response r, unsigned version, bool keep_alive,
                              bool head);
  void forget(const std::shared_ptr<Connection>& c);
};

Server::Server(asio::io_context& io, ServerOptions options, RequestHandler handler)
    : impl_(std::make_shared<Impl>(io, std::move(options), std::move(handler))) {}

Server::~Server() = default;

void Server::start() {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(impl_->options.host, ec);
  tcp::endpoint endpoint;
  if (ec) {
    tcp::resolver resolver(impl_->io);
    auto results = resolver.resolve(impl_->options.host, std::to_string(impl_->options.port), ec);
    if (ec || results.empty()) {
      throw std::system_error(ec, "cannot resolve listen host " + impl_->options.host);
    }
    endpoint = results.begin()->endpoint();
  } else {
    endpoint = tcp::endpoint(address, impl_->options.port);
  }
  auto& a = impl_->acceptor;
  const std::string where = impl_->options.host + ":" + std::to_string(impl_->options.port);
  a.open(endpoint.protocol(), ec);
  if (!ec) a.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(endpoint, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::system_error(ec, "cannot listen on " + where);
  asio::co_spawn(impl_->acceptor.get_executor(), impl_->accept_loop(), asio::detached);
}

std::uint16_t Server::port() const {
  return impl_->acceptor.local_endpoint().port();
}

void Server::stop_accepting() {
  asio::post(impl_->acceptor.get_executor(), [impl = impl_] {
    boost::system::error_code ignored;
    impl->acceptor.close(ignored);
  });
}

void Server::close_connections() {
  impl_->closing = true;
  std::lock_guard lock(impl_->mutex);
  for (const auto& c : impl_->connections) {
    asio::post(c->stream.get_executor(), [c] {
      if (c->idle) c->stream.socket().cancel();
    });
  }
}

std::size_t Server::open_connections() const {
  return impl_->open.load();
}

asio::awaitable<void> Server::Impl::accept_loop() {
  auto self = shared_from_this();
  for (;;) {
    boost::system::error_code ec;
    tcp::socket socket = co_await acceptor.async_accept(asio::make_strand(io),
                                                        asio::redirect_error(use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
      spdlog::warn("accept failed: {}", ec.message());
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    auto c = std::make_shared<Connection>(std::move(socket));
    const std::size_t now_open = ++open;
    {
      std::lock_guard lock(mutex);
      connections.insert(c);
    }
    auto exec = c->stream.get_executor();
    if (now_open > options.max_connections) {
      asio::co_spawn(
          exec,
          refuse(c, Request{}, api::ErrorCode::unavailable,
                 "too many open connections (limit " + std::to_string(options.max_connections) +
                     "); reuse keep-alive connections or retry later"),
          asio::detached);
    } else {
      asio::co_spawn(exec, serve(c), asio::detached);
    }
  }
}

asio::awaitable<bool> Server::Impl::write(Connection& c, Response r, unsigned version,
                                          bool keep_alive, bool head) {
  auto res = to_beast(std::move(r), version, keep_alive, head);
  c.stream.expires_after(options.read_timeout);
  boost::system::error_code ec;
  co_await bhttp::async_write(c.stream, res, asio::redirect_error(use_awaitable, ec));
  co_return !ec;
}

// Answers an error and closes, after draining what the client may still be sending.
asio::awaitable<void> Server::Impl::refuse(std::shared_ptr<Connection> c, Request req,
                                           api::ErrorCode code, std::string message) {
  c->idle = false;
  if (co_await write(*c, respond_error(req, code, std::move(message)), 11, false, false)) {
    boost::system::error_code ec;
    c->stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    c->stream.expires_after(kDrainTimeout);
    std::array<char, 16 * 1024> sink;
    std::size_t drained = 0;
    while (!ec && drained < kDrainLimit) {
      drained += co_await c->stream.async_read_some(asio::buffer(sink),
                                                    asio::redirect_error(use_awaitable, ec));
    }
  }
  forget(c);
}

// Closes the socket and drops the connection from the ones shutdown must reach.
void Server::Impl::forget(const std::shared_ptr<Connection>& c) {
  boost::system::error_code ignored;
  c->stream.socket().close(ignored);
  std::lock_guard lock(mutex);
  connections.erase(c);
  --open;
}

// One connection: requests one after another while the client keeps it alive.
asio::awaitable<void> Server::Impl::serve(std::shared_ptr<Connection> c) {
  auto self = shared_from_this();
  beast::flat_buffer buffer;  // kept across requests: it may hold the start of the next one
  for (;;) {
    c->idle = true;
    if (closing) break;
    Parser parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(options.max_body_bytes);
    Request req;
    ReadOutcome read = co_await read_request(*c, buffer, parser, req);
    if (read.kind == ReadOutcome::Kind::refuse) {
      co_await refuse(c, std::move(req), read.code, std::move(read.message));
      co_return;
    }
    if (read.kind == ReadOutcome::Kind::end) break;
    const bool go_on = co_await answer(*c, parser.get(), req);
    if (!go_on) break;
  }
  boost::system::error_code ignored;
  c->stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  forget(c);
}

// The header within the idle timeout, then the body within the read timeout. `req` gets the
// header's fields even when the read fails, so that a refusal honours the request's Accept.
asio::awaitable<Server::Impl::ReadOutcome> Server::Impl::read_request(Connection& c,
                                                                      beast::flat_buffer& buffer,
                                                                      Parser& parser,
                                                                      Request& req) {
  boost::system::error_code ec;
  c.stream.expires_after(options.idle_timeout);
  co_await bhttp::async_read_header(c.stream, buffer, parser,
                                    asio::redirect_error(use_awaitable, ec));
  c.idle = false;
  // Also when the header announced a body over the limit: Beast fills the fields before it
  // checks Content-Length against the limit.
  const bool header_ok = fill_request_header(parser.get(), req);
  if (!ec && !header_ok) {
    co_return ReadOutcome{ReadOutcome::Kind::refuse, api::ErrorCode::bad_request,
                          "the request path is badly encoded"};
  }
  if (!ec) ec = co_await read_body(c, buffer, parser);
  co_return outcome_of(ec);
}

// Says "100 Continue" first when the client waits for it.
asio::awaitable<boost::system::error_code> Server::Impl::read_body(Connection& c,
                                                                   beast::flat_buffer& buffer,
                                                                   Parser& parser) {
  boost::system::error_code ec;
  if (wants_continue(parser, options.max_body_bytes)) {
    bhttp::response<bhttp::empty_body> cont{bhttp::status::continue_, 11};
    co_await bhttp::async_write(c.stream, cont, asio::redirect_error(use_awaitable, ec));
  }
  c.stream.expires_after(options.read_timeout);
  if (!ec) {
    co_await bhttp::async_read(c.stream, buffer, parser, asio::redirect_error(use_awaitable, ec));
  }
  co_return ec;
}

Server::Impl::ReadOutcome Server::Impl::outcome_of(const boost::system::error_code& ec) const {
  if (!ec) return ReadOutcome{};
  if (ec == bhttp::error::body_limit) {
    return ReadOutcome{ReadOutcome::Kind::refuse, api::ErrorCode::payload_too_large,
                       "the request body is larger than limits.max_body_bytes (" +
                           std::to_string(options.max_body_bytes) +
                           " bytes); split the batch or send a smaller argument"};
  }
  if (is_quiet_end(ec) || ec == bhttp::error::partial_message) {
    return ReadOutcome{ReadOutcome::Kind::end, {}, {}};
  }
  return ReadOutcome{ReadOutcome::Kind::refuse, api::ErrorCode::bad_request,
                     "the request is not valid HTTP/1.1: " + ec.message()};
}

// Handles a request that was read whole and writes the answer; false when the connection ends.
asio::awaitable<bool> Server::Impl::answer(Connection& c, Parser::value_type& msg, Request& req) {
  req.body = std::move(msg.body());
  const bool head = req.method == Method::head;
  const bool keep_alive = msg.keep_alive() && !closing;
  const auto started = std::chrono::steady_clock::now();
  Response res = co_await handle(req);
  const int status = res.status;
  const bool written = co_await write(c, std::move(res), msg.version(), keep_alive, head);
  if (options.access_log) log_access(req, status, started);
  const bool go_on = written && keep_alive;
  co_return go_on;
}

// The handler's response; a handler that throws gets the client a 500 and the log its reason.
asio::awaitable<Response> Server::Impl::handle(Request& req) {
  try {
    co_return co_await handler(req);
  } catch (const std::exception& e) {
    spdlog::error("{} {} failed: {}", to_string(req.method), req.path, e.what());
  }
  co_return respond_error(req, api::ErrorCode::internal,
                          "the master failed to handle this request; see its log");
}

}  // namespace jq::http
