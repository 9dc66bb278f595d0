// One coroutine per connection, a template over its stream: a plain TCP socket for HTTP,
// beast::ssl_stream over one for HTTPS. Both compile from the same session code, so the plain
// path is what it was before TLS existed (no virtual call or branch per read); only shutdown
// reaches connections through a small base class.
#include "src/http/server.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <set>
#include <system_error>
#include <type_traits>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/core/detect_ssl.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "common/message_parser.hpp"
#include "common/read_message.hpp"
#include "common/send_now.hpp"
#include "common/serial_executor.hpp"
#include "common/socket_deadline.hpp"
#include "src/http/beast_message.hpp"
#include "src/http/connection_watch.hpp"
#include "src/http/respond.hpp"
#include "src/log/event.hpp"

namespace jq::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace ssl = boost::asio::ssl;
using asio::use_awaitable;
using asio::ip::tcp;
using Parser = MessageParser<true>;
using PlainStream = tcp::socket;
using TlsStream = beast::ssl_stream<tcp::socket>;
template <class Stream>
constexpr bool kIsTls = std::is_same_v<Stream, TlsStream>;

namespace {

constexpr std::uint32_t kHeaderLimit = 16 * 1024;
constexpr std::size_t kReadSize = 64 * 1024;  // the most one read takes, as Beast's own reads
// After refusing a request whose body we will not read, keep reading (and discarding) for a
// while so the client gets to read our answer instead of a connection reset.
constexpr std::size_t kDrainLimit = 8 * 1024 * 1024;
constexpr std::chrono::seconds kDrainTimeout{2};

bool is_quiet_end(const boost::system::error_code& ec) {
  return ec == bhttp::error::end_of_stream || ec == asio::error::operation_aborted ||
         ec == asio::error::connection_reset || ec == asio::error::eof ||
         ec == asio::error::bad_descriptor ||
         ec == ssl::error::stream_truncated;  // a TLS client that left without close_notify
}

// "Expect: 100-continue" with a body we are willing to read: the client waits for our go-ahead.
bool wants_continue(Parser& parser, std::size_t max_body_bytes) {
  return beast::iequals(parser.fields().expect, "100-continue") &&
         !(parser.content_length() && *parser.content_length() > max_body_bytes);
}

void log_access(std::string_view method, const std::string& path, int status,
                std::chrono::steady_clock::time_point started) {
  log::event(spdlog::level::info, "http request",
             {{"method", method},
              {"path", path},
              {"status", status},
              {"duration_ms",
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                   .count()}});
}

std::string too_many_connections(std::size_t limit) {
  return "too many open connections (limit " + std::to_string(limit) +
         "); reuse keep-alive connections or retry later";
}

}  // namespace

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
  // What shutdown needs to reach a connection, whatever its stream: its socket (and executor)
  // and whether it is between requests; and the deadline of what it waits for. All are only
  // touched through the connection's executor (a strand, or the io_context with one thread:
  // serial_executor).
  struct ConnectionBase {
    virtual ~ConnectionBase() = default;
    virtual tcp::socket& socket() = 0;
    bool idle = true;
    std::shared_ptr<SocketDeadline> deadline;
  };

  template <class Stream>
  struct Connection final : ConnectionBase {
    Connection(tcp::socket accepted, std::shared_ptr<ssl::context> tls,
               std::chrono::steady_clock::duration tick)
        : context(std::move(tls)), stream(make_stream(std::move(accepted), context.get())) {
      deadline = std::make_shared<SocketDeadline>(socket(), tick);
    }
    tcp::socket& socket() override { return beast::get_lowest_layer(stream); }

    // TLS: the certificate this connection was accepted with, kept while it lives (a reload
    // swaps in a new context for later connections). Declared before `stream`, which uses it.
    std::shared_ptr<ssl::context> context;
    Stream stream;

   private:
    static Stream make_stream(tcp::socket socket, ssl::context* tls) {
      if constexpr (kIsTls<Stream>) {
        return Stream(std::move(socket), *tls);
      } else {
        return Stream(std::move(socket));
      }
    }
  };

  Impl(asio::io_context& io, ServerOptions o, RequestHandler h)
      : io(io), options(std::move(o)), handler(std::move(h)), acceptor(io) {}

  asio::io_context& io;
  ServerOptions options;
  RequestHandler handler;
  tcp::acceptor acceptor;
  std::atomic<bool> closing{false};
  std::atomic<std::size_t> open{0};
  std::chrono::steady_clock::time_point next_accept_warning{};  // accept_loop's only
  std::mutex mutex;
  std::set<std::shared_ptr<ConnectionBase>> connections;

  // What reading one request came to: a request to handle, a refusal (answer an error, then
  // close), or a quiet end (the client left, or the connection timed out).
  struct ReadOutcome {
    enum class Kind { handle, refuse, end };
    Kind kind = Kind::handle;
    api::ErrorCode code{};
    std::string message;
    bool header_read = false;  // the request's method and path are known
  };

  asio::awaitable<void> accept_loop();
  template <class Stream>
  void start_session(tcp::socket socket, std::shared_ptr<ssl::context> tls);
  template <class Stream>
  asio::awaitable<void> serve(std::shared_ptr<Connection<Stream>> c);
  asio::awaitable<bool> handshake(std::shared_ptr<Connection<TlsStream>> c,
                                  beast::flat_buffer& buffer);
  template <class Stream>
  asio::awaitable<ReadOutcome> read_request(Connection<Stream>& c, beast::flat_buffer& buffer,
                                            Parser& parser, Request& req);
  template <class Stream>
  asio::awaitable<boost::system::error_code> read_header(
      Connection<Stream>& c, beast::flat_buffer& buffer, Parser& parser,
      std::chrono::steady_clock::time_point began);
  template <class Stream>
  asio::awaitable<boost::system::error_code> read_body(Connection<Stream>& c,
                                                       beast::flat_buffer& buffer, Parser& parser,
                                                       std::chrono::steady_clock::time_point began);
  ReadOutcome outcome_of(const boost::system::error_code& ec) const;
  template <class Stream>
  asio::awaitable<bool> answer(Connection<Stream>& c, Parser& parser, Request& req);
  asio::awaitable<Response> handle(Request& req);
  template <class Stream, class AsyncStream>
  asio::awaitable<void> refuse(std::shared_ptr<Connection<Stream>> c, AsyncStream& stream,
                               Request req, bool header_read, api::ErrorCode code,
                               std::string message);
  void note_refusal(const Request& req, bool header_read, int status);
  template <class AsyncStream>
  asio::awaitable<bool> write(ConnectionBase& c, AsyncStream& stream, Response r, unsigned version,
                              bool keep_alive, bool head);
  void forget(const std::shared_ptr<ConnectionBase>& c);
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
    asio::post(c->socket().get_executor(), [c] {
      if (c->idle) c->socket().cancel();
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
    tcp::socket socket =
        co_await acceptor.async_accept(serial_executor(io.get_executor(), options.one_io_thread),
                                       asio::redirect_error(use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
      // Out of file descriptors (or kernel memory) the same accept fails again at once: retried
      // without a pause it would spin the io thread and flood the log.
      if (const auto now = std::chrono::steady_clock::now(); now >= next_accept_warning) {
        spdlog::warn(
            "accept failed: {}; new connections wait in the listen backlog (raise the open "
            "files limit, ulimit -n, or lower limits.max_connections)",
            ec.message());
        next_accept_warning = now + std::chrono::seconds(10);
      }
      asio::steady_timer pause(io, std::chrono::milliseconds(100));
      co_await pause.async_wait(asio::redirect_error(use_awaitable, ec));
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    if (options.tls) {
      start_session<TlsStream>(std::move(socket), options.tls->current());
    } else {
      start_session<PlainStream>(std::move(socket), nullptr);
    }
  }
}

template <class Stream>
void Server::Impl::start_session(tcp::socket socket, std::shared_ptr<ssl::context> tls) {
  // The deadline looks at least this often: no timeout but the drain's is shorter.
  const auto tick = std::min({options.idle_timeout, options.header_timeout, options.read_timeout});
  auto c = std::make_shared<Connection<Stream>>(std::move(socket), std::move(tls), tick);
  const std::size_t now_open = ++open;
  {
    std::lock_guard lock(mutex);
    connections.insert(c);
  }
  auto exec = c->stream.get_executor();
  if (now_open <= options.max_connections) {
    asio::co_spawn(exec, serve(c), asio::detached);
  } else if constexpr (kIsTls<Stream>) {
    // An answer would need a handshake first: work an overloaded master should not take on.
    note_refusal(Request{}, false, 503);
    asio::post(exec, [self = shared_from_this(), c] { self->forget(c); });
  } else {
    asio::co_spawn(exec,
                   refuse(c, c->stream, Request{}, false, api::ErrorCode::unavailable,
                          too_many_connections(options.max_connections)),
                   asio::detached);
  }
}

// The head and the body in one gathered write (src/util/header_lines.hpp says why not Beast's
// serializer).
template <class AsyncStream>
asio::awaitable<bool> Server::Impl::write(ConnectionBase& c, AsyncStream& stream, Response r,
                                          unsigned version, bool keep_alive, bool head) {
  const std::string response_head = encode_response_head(r, version, keep_alive);
  const std::array<asio::const_buffer, 2> buffers{
      asio::buffer(response_head), head ? asio::const_buffer() : asio::buffer(r.body)};
  c.deadline->expire_after(options.read_timeout);
  boost::system::error_code ec;
  auto unwritten = buffers;
  if constexpr (std::is_same_v<AsyncStream, tcp::socket>) {
    unwritten = send_now(stream.native_handle(), buffers, ec);
  }
  if (!ec && asio::buffer_size(unwritten) > 0) {
    co_await asio::async_write(stream, unwritten, asio::redirect_error(use_awaitable, ec));
  }
  co_return !ec;
}

// Answers an error on `stream` (the connection's, or its TCP layer when it never got to TLS) and
// closes, after draining what the client may still be sending. (`c` is not a pointer to the base
// class: g++ 12 destroys the temporary of such a conversion in a co_await expression twice.)
template <class Stream, class AsyncStream>
asio::awaitable<void> Server::Impl::refuse(std::shared_ptr<Connection<Stream>> c,
                                           AsyncStream& stream, Request req, bool header_read,
                                           api::ErrorCode code, std::string message) {
  c->idle = false;
  Response answer = respond_error(req, code, std::move(message));
  note_refusal(req, header_read, answer.status);
  if (co_await write(*c, stream, std::move(answer), 11, false, false)) {
    boost::system::error_code ec;
    c->socket().shutdown(tcp::socket::shutdown_send, ec);
    c->deadline->expire_after(kDrainTimeout);
    std::array<char, 16 * 1024> sink;
    std::size_t drained = 0;
    while (!ec && drained < kDrainLimit) {
      drained += co_await stream.async_read_some(asio::buffer(sink),
                                                 asio::redirect_error(use_awaitable, ec));
    }
  }
  forget(c);
}

// A request answered (or a connection closed) before routing, in the access log and the
// metrics: its method only when its header was read.
void Server::Impl::note_refusal(const Request& req, bool header_read, int status) {
  const std::string_view method = header_read ? to_string(req.method) : "unknown";
  if (options.access_log) log_access(method, req.path, status, std::chrono::steady_clock::now());
  if (options.on_refused) options.on_refused(method, status);
}

// Closes the socket and drops the connection from the ones shutdown must reach.
void Server::Impl::forget(const std::shared_ptr<ConnectionBase>& c) {
  c->deadline->stop();
  boost::system::error_code ignored;
  c->socket().close(ignored);
  std::lock_guard lock(mutex);
  connections.erase(c);
  --open;
}

// One connection: requests one after another while the client keeps it alive.
template <class Stream>
asio::awaitable<void> Server::Impl::serve(std::shared_ptr<Connection<Stream>> c) {
  auto self = shared_from_this();
  beast::flat_buffer buffer;  // kept across requests: it may hold the start of the next one
  if constexpr (kIsTls<Stream>) {
    if (!co_await handshake(c, buffer)) co_return;
  }
  bool answered_last = false;  // the loop ended after an answer that closes the connection
  for (;;) {
    c->idle = true;
    if (closing) break;
    Parser parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(options.max_body_bytes);
    Request req;
    ReadOutcome read = co_await read_request(*c, buffer, parser, req);
    if (read.kind == ReadOutcome::Kind::refuse) {
      co_await refuse(c, c->stream, std::move(req), read.header_read, read.code,
                      std::move(read.message));
      co_return;
    }
    if (read.kind == ReadOutcome::Kind::end) break;
    answered_last = !co_await answer(*c, parser, req);
    if (answered_last) break;
  }
  boost::system::error_code ec;
  if constexpr (kIsTls<Stream>) {
    // A close_notify tells the client the answer is whole; a client that reads to the end
    // answers with its own or closes, which ends the wait at once.
    if (answered_last) {
      c->deadline->expire_after(kDrainTimeout);
      co_await c->stream.async_shutdown(asio::redirect_error(use_awaitable, ec));
    }
  }
  c->socket().shutdown(tcp::socket::shutdown_send, ec);
  forget(c);
}

// The TLS handshake, within the header timeout. A client that sends plain HTTP to this port
// gets a 400 in plain HTTP that says to use https://, rather than a connection closed unexplained.
asio::awaitable<bool> Server::Impl::handshake(std::shared_ptr<Connection<TlsStream>> c,
                                              beast::flat_buffer& buffer) {
  tcp::socket& tcp = c->socket();
  c->deadline->expire_after(options.header_timeout);
  boost::system::error_code ec;
  const bool is_tls =
      co_await beast::async_detect_ssl(tcp, buffer, asio::redirect_error(use_awaitable, ec));
  if (!ec && !is_tls) {
    Request plain;
    std::string message = "this port serves HTTPS (tls.cert is set); use an https:// URL";
    co_await refuse(c, tcp, std::move(plain), false, api::ErrorCode::bad_request,
                    std::move(message));
    co_return false;
  }
  if (!ec) {
    const std::size_t used = co_await c->stream.async_handshake(
        ssl::stream_base::server, buffer.data(), asio::redirect_error(use_awaitable, ec));
    buffer.consume(used);
  }
  if (ec) {
    if (!is_quiet_end(ec)) spdlog::debug("TLS handshake failed: {}", ec.message());
    forget(c);
    co_return false;
  }
  co_return true;
}

// The request's first bytes within the idle timeout, then from those its header within the
// header timeout and the whole of it within the read timeout. `req` gets the header's fields
// even when the read fails, so that a refusal honours the request's Accept.
template <class Stream>
asio::awaitable<Server::Impl::ReadOutcome> Server::Impl::read_request(Connection<Stream>& c,
                                                                      beast::flat_buffer& buffer,
                                                                      Parser& parser,
                                                                      Request& req) {
  boost::system::error_code ec;
  if (buffer.size() == 0) {
    c.deadline->expire_after(options.idle_timeout);
    const std::size_t n =
        co_await c.stream.async_read_some(buffer.prepare(beast::read_size(buffer, kReadSize)),
                                          asio::redirect_error(use_awaitable, ec));
    buffer.commit(n);
  }
  c.idle = false;
  const auto began = std::chrono::steady_clock::now();
  if (!ec) ec = co_await read_header(c, buffer, parser, began);
  // Also when the header announced a body over the limit: Beast fills the fields before it
  // checks Content-Length against the limit.
  const bool header_read = !ec || ec == bhttp::error::body_limit;
  const bool header_ok = fill_request_header(parser, req);
  if (!ec && !header_ok) {
    co_return ReadOutcome{ReadOutcome::Kind::refuse, api::ErrorCode::bad_request,
                          "the request path is badly encoded", true};
  }
  if (!ec) ec = co_await read_body(c, buffer, parser, began);
  ReadOutcome outcome = outcome_of(ec);
  outcome.header_read = header_read;
  co_return outcome;
}

// Parses what the buffer holds, and reads more only when the header is not whole yet: usually
// it came whole with the first bytes, and no second read (nor timer change) is needed.
template <class Stream>
asio::awaitable<boost::system::error_code> Server::Impl::read_header(
    Connection<Stream>& c, beast::flat_buffer& buffer, Parser& parser,
    std::chrono::steady_clock::time_point began) {
  boost::system::error_code ec;
  if (parse_buffered(buffer, parser, ReadUntil::header, ec) || ec) co_return ec;
  c.deadline->expire_at(began + options.header_timeout);
  co_return co_await read_message(c.stream, buffer, parser, ReadUntil::header);
}

// Says "100 Continue" first when the client waits for it. A body that came with the header (the
// usual case for a small request) is parsed where it is, without an asynchronous read.
template <class Stream>
asio::awaitable<boost::system::error_code> Server::Impl::read_body(
    Connection<Stream>& c, beast::flat_buffer& buffer, Parser& parser,
    std::chrono::steady_clock::time_point began) {
  boost::system::error_code ec;
  if (wants_continue(parser, options.max_body_bytes)) {
    bhttp::response<bhttp::empty_body> cont{bhttp::status::continue_, 11};
    co_await bhttp::async_write(c.stream, cont, asio::redirect_error(use_awaitable, ec));
  } else if (parse_buffered(buffer, parser, ReadUntil::whole, ec) || ec) {
    co_return ec;
  }
  c.deadline->expire_at(began + options.read_timeout);
  if (!ec) ec = co_await read_message(c.stream, buffer, parser, ReadUntil::whole);
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
template <class Stream>
asio::awaitable<bool> Server::Impl::answer(Connection<Stream>& c, Parser& parser, Request& req) {
  req.body = std::move(parser.body());
  const bool head = req.method == Method::head;
  const auto started = std::chrono::steady_clock::now();
  c.deadline->expire_never();  // a long poll waits as long as it asked
  ConnectionWatch client(c.socket());
  req.client = &client;
  Response res = co_await handle(req);
  client.end();
  req.client = nullptr;
  // After the handler: a shutdown that began while it ran (a long poll, a slow Redis) must say
  // Connection: close, or the client would send its next request into a closing socket.
  const bool keep_alive = parser.keep_alive() && !closing;
  const int status = res.status;
  const bool written =
      co_await write(c, c.stream, std::move(res), parser.version(), keep_alive, head);
  if (options.access_log) log_access(to_string(req.method), req.path, status, started);
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
