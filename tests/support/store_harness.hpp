// The engine's own Redis client on an io_context the test drives, so a test can call the
// stores' coroutines directly: the policy layer (JobStore, DispatchStore, WorkerStore) without
// HTTP in between.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "src/redis/client.hpp"

namespace jq::test {

// A system clock the test sets: stores take `now` from it.
class TestClock {
 public:
  explicit TestClock(std::chrono::system_clock::time_point start)
      : now_(std::make_shared<std::chrono::system_clock::time_point>(start)) {}
  std::function<std::chrono::system_clock::time_point()> fn() const {
    return [now = now_] { return *now; };
  }
  void advance(std::chrono::milliseconds by) { *now_ += by; }

 private:
  std::shared_ptr<std::chrono::system_clock::time_point> now_;
};

class StoreHarness {
 public:
  explicit StoreHarness(std::uint16_t redis_port);  // connected when it returns
  explicit StoreHarness(const std::string& url);    // redis:// or redis+cluster://
  ~StoreHarness();

  redis::Client& client() { return *client_; }

  // Runs the coroutine to its end on the io_context (10 s at most) and returns its value.
  template <class T>
  T run(boost::asio::awaitable<T> task) {
    std::optional<T> result;
    std::exception_ptr error;
    bool done = false;
    boost::asio::co_spawn(io_, std::move(task), [&](std::exception_ptr e, T value) {
      error = e;
      if (!e) result.emplace(std::move(value));
      done = true;
    });
    drive(done);
    if (error) std::rethrow_exception(error);
    return std::move(*result);
  }
  void run(boost::asio::awaitable<void> task);

 private:
  void drive(const bool& done);

  boost::asio::io_context io_;
  std::unique_ptr<redis::Client> client_;
};

}  // namespace jq::test
