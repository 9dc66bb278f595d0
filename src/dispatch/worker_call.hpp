// One HTTP POST to a worker endpoint and what came of it, without Beast in the interface.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "api/http_url.hpp"

namespace jq::dispatch {

class TlsContexts;

struct WorkerCall {
  std::string target;  // path and query
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // MessagePack
  std::chrono::steady_clock::time_point deadline;
  std::uint64_t max_answer_bytes = 1 << 20;  // a larger answer body is refused unread
};

struct WorkerAnswer {
  enum class Kind {
    answered,     // a whole HTTP response arrived
    unreachable,  // no connection (a certificate that does not verify included), or it broke
                  // before the request was sent: the attempt does not count
    timed_out,    // no whole answer before the deadline (or not sent: it had passed)
    broken,       // the connection failed after the request was sent
  };
  Kind kind = Kind::answered;
  int status = 0;
  std::string content_type;
  std::string body;
  std::optional<std::chrono::milliseconds> retry_after;  // 429/503: how long it asks for
  std::string error;                                     // what went wrong, for last_error and logs
};

// How a pool makes its connections (the same for every endpoint).
struct PoolOptions {
  // One thread runs the executor: connections need no strands.
  bool one_io_thread = false;
  // A new connection (with its TLS handshake) that takes longer than this (or than the call's
  // deadline, if that comes first) is unreachable (dispatch.connect_timeout).
  std::chrono::milliseconds connect_timeout{10'000};
};

// Keep-alive connections to one endpoint (scheme, host, port and, for https, CA file), reused by
// successive calls; one call uses one connection at a time (HTTP/1.1 without pipelining).
class ConnectionPool {
 public:
  // For an https `address`, each new connection verifies the worker's certificate with the
  // context of `ca_file` (empty: the defaults) from `tls`; for http:// both are unused. Each
  // connection gets a strand of `executor`'s, unless one thread runs it.
  ConnectionPool(boost::asio::any_io_executor executor, const api::HttpUrl& address,
                 std::shared_ptr<TlsContexts> tls, std::string ca_file, std::size_t max_idle,
                 PoolOptions options = {});
  ~ConnectionPool();

  boost::asio::awaitable<WorkerAnswer> call(WorkerCall call);
  void clear();  // drop idle connections (the endpoint was removed or failed)
  // Keep up to `max_idle` idle connections (beyond that a returned one is closed): as many as
  // the endpoint may have calls at once, or every call beyond the count opens a new connection.
  void keep_idle(std::size_t max_idle);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace jq::dispatch
