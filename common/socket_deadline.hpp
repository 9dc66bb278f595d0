// The deadline of what a connection waits for, kept by one timer that looks at it at least once
// per `tick` while there is one: a server connection's request, header, body and answer
// (src/http/server.cpp), a worker call's exchange (src/dispatch/worker_call.cpp), a jqbench
// request (cmd/jqbench/http_connection.cpp), a jqworker connection
// (cmd/jqworker/worker_server.cpp). Beast's tcp_stream armed a timer for every read and
// write and cancelled it when the operation ended: about 0.7 µs of the master's 10 per single
// push (docs/BENCHMARKS.md). Here moving the deadline is a store; the timer is armed again only
// when a deadline comes before its next look (a timeout shorter than the tick, or the first
// deadline after a time without one). Past the deadline the socket is closed, and what waits on
// it fails, as when Beast's timer fired.
// Used only from the socket's executor (a strand, or the io_context with one thread).
#pragma once

#include <algorithm>
#include <chrono>
#include <memory>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

namespace jq {

class SocketDeadline : public std::enable_shared_from_this<SocketDeadline> {
 public:
  using Clock = std::chrono::steady_clock;

  // `socket` outlives this (both belong to one connection); the timer runs on its executor.
  SocketDeadline(boost::asio::ip::tcp::socket& socket, Clock::duration tick)
      : socket_(socket), timer_(socket.get_executor()), tick_(tick) {}

  void expire_at(Clock::time_point t) {
    deadline_ = t;
    if (t < armed_) arm(t);
  }
  void expire_after(Clock::duration d) { expire_at(Clock::now() + d); }
  // No deadline (a server handling its request, a connection between requests): the timer
  // stops at its next look.
  void expire_never() { deadline_ = Clock::time_point::max(); }

  // The connection ends: the timer stops now.
  void stop() {
    stopped_ = true;
    armed_ = Clock::time_point::min();  // never armed again
    timer_.cancel();
  }

 private:
  // Looks at `t` or within a tick, whichever comes first: a deadline set later is then never
  // before the next look unless its timeout is shorter than the tick.
  void arm(Clock::time_point t) {
    if (stopped_) return;
    armed_ = std::min(t, Clock::now() + tick_);
    timer_.expires_at(armed_);
    timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
      if (ec) return;  // armed again (a newer wait is on its way) or stopped
      if (auto self = weak.lock()) self->look();
    });
  }

  void look() {
    if (stopped_) return;
    armed_ = Clock::time_point::max();
    if (deadline_ == Clock::time_point::max()) return;  // the next deadline arms it again
    if (Clock::now() < deadline_) {
      arm(deadline_);
      return;
    }
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

  boost::asio::ip::tcp::socket& socket_;
  boost::asio::steady_timer timer_;
  const Clock::duration tick_;
  Clock::time_point deadline_ = Clock::time_point::max();
  Clock::time_point armed_ = Clock::time_point::max();  // when the timer looks next; max: never
  bool stopped_ = false;
};

}  // namespace jq
