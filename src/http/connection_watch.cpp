#include "src/http/connection_watch.hpp"

#include "common/socket_peek.hpp"

namespace jq::http {

void ConnectionWatch::watch(std::function<void()> on_left) {
  if (state_) return;
  state_ = std::make_shared<State>();
  socket_.async_wait(boost::asio::ip::tcp::socket::wait_read,
                     [state = state_, fd = socket_.native_handle(),
                      on_left = std::move(on_left)](const boost::system::error_code& ec) {
                       if (ec || state->done || peek_peer(fd) != PeerState::closed) return;
                       state->left = true;
                       on_left();
                     });
}

void ConnectionWatch::end() {
  if (!state_ || state_->done) return;
  state_->done = true;
  boost::system::error_code ignored;
  socket_.cancel(ignored);
}

}  // namespace jq::http
