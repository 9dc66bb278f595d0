// The HTTP/1.1 server, over plain TCP or TLS: a listener, one coroutine per connection
// (keep-alive, timeouts and a body limit on every request, a connection limit), and a handler
// that turns a Request into a Response. Beast and OpenSSL stay inside the .cpp files.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include "src/http/message.hpp"
#include "src/http/tls_identity.hpp"

namespace jq::http {

struct ServerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8080;
  std::size_t max_body_bytes = 1 << 20;
  std::size_t max_connections = 10'000;
  // A connection waits idle_timeout for a request's first bytes (keep-alive); from those, the
  // header must be in within header_timeout and the whole request within read_timeout. A TLS
  // handshake gets header_timeout.
  std::chrono::milliseconds idle_timeout{60'000};
  std::chrono::milliseconds header_timeout{10'000};
  std::chrono::milliseconds read_timeout{30'000};
  std::shared_ptr<TlsIdentity> tls;  // null: plain HTTP
  bool access_log = false;           // one line per request (path, never the query)
  // Whether one thread runs the io_context. Then that thread already runs a connection's
  // handlers one at a time, and a strand per connection only costs: its lock and reference
  // counts took 6 % of a single push's CPU in the master (docs/BENCHMARKS.md).
  bool one_io_thread = false;
  // Told of each request the server answers itself with an error and a close (a body over
  // max_body_bytes, a header too large or not HTTP, plain HTTP on the TLS port, a connection over
  // max_connections: 503, also for a TLS one closed unanswered), which never reach the router;
  // `method` is "unknown" when the header was never read. For the metrics; such answers are in
  // the access log too.
  std::function<void(std::string_view method, int status)> on_refused;
};

using RequestHandler = std::function<boost::asio::awaitable<Response>(Request&)>;

class Server {
 public:
  Server(boost::asio::io_context& io, ServerOptions options, RequestHandler handler);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and listens; throws std::system_error naming the address when it cannot.
  void start();
  std::uint16_t port() const;

  // Shutdown, in this order: no new connections; idle ones close now and busy ones after their
  // current response; open_connections() reaches 0 when all are gone.
  void stop_accepting();
  void close_connections();
  std::size_t open_connections() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace jq::http
