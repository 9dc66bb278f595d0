#include "src/util/socket_deadline.hpp"

#include <algorithm>

namespace jq {

SocketDeadline::SocketDeadline(boost::asio::ip::tcp::socket& socket, Clock::duration tick)
    : socket_(socket), timer_(socket.get_executor()), tick_(tick) {}

void SocketDeadline::stop() {
  stopped_ = true;
  armed_ = Clock::time_point::min();  // never armed again
  timer_.cancel();
}

// Looks at `t` or within a tick, whichever comes first: a deadline set later is then never
// before the next look unless its timeout is shorter than the tick.
void SocketDeadline::arm(Clock::time_point t) {
  if (stopped_) return;
  armed_ = std::min(t, Clock::now() + tick_);
  timer_.expires_at(armed_);
  timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    if (ec) return;  // armed again (a newer wait is on its way) or stopped
    if (auto self = weak.lock()) self->look();
  });
}

void SocketDeadline::look() {
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

}  // namespace jq
