// The deadline of what a server connection waits for (a request's first bytes, its header, its
// body, the answer's write), kept by one timer that looks at it at least once per `tick`. Beast's
// tcp_stream armed a timer for every read and write and cancelled it when the operation ended:
// about 0.7 µs of the master's 10 per single push (docs/BENCHMARKS.md). Here moving the
// deadline is a store, and the timer is only re-armed when a deadline comes before its next
// look, which a timeout shorter than `tick` does. Past the deadline the socket is closed: what
// waits on it fails, as it did when Beast's timer fired.
// Used only from the connection's executor (a strand, or the io_context with one thread).
#pragma once

#include <chrono>
#include <memory>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

namespace jq::http {

class ConnectionDeadline : public std::enable_shared_from_this<ConnectionDeadline> {
 public:
  using Clock = std::chrono::steady_clock;

  // `socket` outlives this (both belong to the connection); the timer runs on its executor.
  ConnectionDeadline(boost::asio::ip::tcp::socket& socket, Clock::duration tick);

  void expire_at(Clock::time_point t) {
    deadline_ = t;
    if (t < armed_) arm(t);
  }
  void expire_after(Clock::duration d) { expire_at(Clock::now() + d); }
  // While the request is being handled (a long poll waits up to a minute): no deadline.
  void expire_never() { deadline_ = Clock::time_point::max(); }
  // The connection ends: the timer stops.
  void stop();

 private:
  void arm(Clock::time_point t);
  void look();

  boost::asio::ip::tcp::socket& socket_;
  boost::asio::steady_timer timer_;
  const Clock::duration tick_;
  Clock::time_point deadline_ = Clock::time_point::max();
  Clock::time_point armed_ = Clock::time_point::max();  // when the timer looks next; max: never
  bool stopped_ = false;
};

}  // namespace jq::http
