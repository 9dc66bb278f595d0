#include "src/http/connection_watch.hpp"

#include <poll.h>

#include <boost/asio/steady_timer.hpp>

#include "common/socket_peek.hpp"

namespace jq::http {

namespace {

// While bytes wait unread on the socket (a TLS client's close_notify, a request pipelined
// behind the poll), readiness says nothing more: the peer's close is looked for this often.
constexpr std::chrono::milliseconds kLookAgain{200};

// The peer closed its side, whatever it sent before (POLLRDHUP: its FIN is in).
bool peer_closed(int fd) {
  if (peek_peer(fd) == PeerState::closed) return true;
  pollfd p{fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

}  // namespace

struct ConnectionWatch::State {  // shared with the handlers, which may run after end()
  explicit State(boost::asio::any_io_executor executor) : timer(std::move(executor)) {}
  bool done = false;
  bool left = false;
  std::function<void()> on_left;
  boost::asio::steady_timer timer;

  void leave() {
    left = true;
    on_left();
  }
  // Bytes are there: no readiness to wait for; look again later.
  static void look_later(const std::shared_ptr<State>& state, int fd) {
    state->timer.expires_after(kLookAgain);
    state->timer.async_wait([state, fd](const boost::system::error_code& ec) {
      if (ec || state->done) return;
      if (peer_closed(fd)) return state->leave();
      look_later(state, fd);
    });
  }
};

ConnectionWatch::~ConnectionWatch() {
  end();
}

bool ConnectionWatch::left() const {
  return state_ && state_->left;
}

void ConnectionWatch::watch(std::function<void()> on_left) {
  if (state_) return;
  state_ = std::make_shared<State>(socket_.get_executor());
  state_->on_left = std::move(on_left);
  socket_.async_wait(
      boost::asio::ip::tcp::socket::wait_read,
      [state = state_, fd = socket_.native_handle()](const boost::system::error_code& ec) {
        if (ec || state->done) return;
        if (peer_closed(fd)) return state->leave();
        if (peek_peer(fd) == PeerState::sent_bytes) State::look_later(state, fd);
      });
}

void ConnectionWatch::end() {
  if (!state_ || state_->done) return;
  state_->done = true;
  boost::system::error_code ignored;
  socket_.cancel(ignored);
  state_->timer.cancel();
}

}  // namespace jq::http
