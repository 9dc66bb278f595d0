// The deadline of what a connection waits for, kept by one timer that looks at it at least once
// per `tick` while there is one: a server connection's request, header, body and answer
// (src/http/server.cpp), a worker call's exchange (src/dispatch/worker_call.cpp). Beast's
// tcp_stream armed a timer for every read and write and cancelled it when the operation ended:
// about 0.7 µs of the master's 10 per single push (docs/BENCHMARKS.md). Here moving the
// deadline is a store; the timer is armed again only when a deadline comes before its next
// look (a timeout shorter than the tick, or the first deadline after a time without one). Past
// the deadline the socket is closed, and what waits on it fails, as when Beast's timer fired.
// Used only from the socket's executor (a strand, or the io_context with one thread).
#pragma once

#include <chrono>
#include <memory>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

namespace jq {

class SocketDeadline : public std::enable_shared_from_this<SocketDeadline> {
 public:
  using Clock = std::chrono::steady_clock;

  // `socket` outlives this (both belong to one connection); the timer runs on its executor.
  SocketDeadline(boost::asio::ip::tcp::socket& socket, Clock::duration tick);

  void expire_at(Clock::time_point t) {
    deadline_ = t;
    if (t < armed_) arm(t);
  }
  void expire_after(Clock::duration d) { expire_at(Clock::now() + d); }
  // No deadline (a server handling its request, a worker connection between calls): the timer
  // stops at its next look.
  void expire_never() { deadline_ = Clock::time_point::max(); }
  // The connection ends: the timer stops now.
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

}  // namespace jq
