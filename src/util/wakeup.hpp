// A level-triggered wake-up for a loop running on a strand: notify() from any thread makes the
// next (or current) wait() return at once; several notifies before a wait count as one.
#pragma once

#include <chrono>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace jq {

namespace asio = boost::asio;

class Wakeup {
 public:
  explicit Wakeup(asio::strand<asio::any_io_executor> strand) : strand_(strand), timer_(strand) {}

  // Inline when already on the strand (the usual caller), else queued on it.
  void notify() {
    asio::dispatch(strand_, [this] {
      pending_ = true;
      timer_.cancel();
    });
  }

  // On the strand. Returns after a notify or after `at_most`.
  asio::awaitable<void> wait(std::chrono::steady_clock::duration at_most) {
    if (!pending_) {
      timer_.expires_after(at_most);
      boost::system::error_code ec;
      co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    pending_ = false;
  }

 private:
  asio::strand<asio::any_io_executor> strand_;
  asio::steady_timer timer_;
  bool pending_ = false;
};

}  // namespace jq
