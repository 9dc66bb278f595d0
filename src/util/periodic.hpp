// One shape for the master's timed loops (the scheduler, the promoter, maintenance): a step that
// runs on the loop's own strand and says how long to sleep before the next, woken early by
// poke(), until stop(). Nothing polls faster than its step asks: the promoter sleeps until the
// next due retry, the scheduler until an endpoint opens or its tick.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/strand.hpp>

#include "src/util/wakeup.hpp"

namespace jq {

class Periodic {
 public:
  using Duration = std::chrono::steady_clock::duration;
  // One pass; returns how long to sleep before the next one (at most: poke() ends it early).
  using Step = std::function<asio::awaitable<Duration>()>;
  // Runs once on the strand after the last step, e.g. to give back what the loop held.
  using Finish = std::function<asio::awaitable<void>()>;

  Periodic(asio::any_io_executor executor, std::string name, Step step, Finish finish = {});
  Periodic(const Periodic&) = delete;
  Periodic& operator=(const Periodic&) = delete;

  void start();
  void stop();  // any thread; the current step finishes first
  void poke();  // any thread: the next (or current) sleep ends at once

  const asio::strand<asio::any_io_executor>& strand() const { return strand_; }
  bool stopping() const { return stopping_; }  // on the strand
  // Any thread: after stop(), the last step and the finish have run.
  bool done() const { return done_.load(std::memory_order_acquire); }

 private:
  asio::awaitable<void> run();

  asio::strand<asio::any_io_executor> strand_;
  std::string name_;
  Step step_;
  Finish finish_;
  Wakeup wakeup_;
  bool stopping_ = false;
  std::atomic<bool> done_{false};
};

}  // namespace jq
