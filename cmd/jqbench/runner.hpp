// Who runs a scenario's jobs: jqbench's built-in worker endpoint, or an external worker (e.g.
// jqworker or a Node worker, in a process of its own) at --external-worker URL. Either way
// jqbench registers it with the master for every name and removes the registration afterwards.
// The built-in worker counts the answers it wrote; an external one is asked nothing: jobs done
// are `succeeded` of GET /v1/stats, read every 10 ms on a connection of its own (so "done" is
// the master having stored the outcome, and the end of a run is known to within 10 ms).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "cmd/jqbench/bench.hpp"
#include "cmd/jqbench/report.hpp"

namespace jq::bench {

// Jobs finished as the master counts them, polled until stop(). Shared with its coroutine.
class SucceededPoller {
 public:
  SucceededPoller(std::unique_ptr<HttpConnection> master, std::int64_t base)
      : master_(std::move(master)), base_(base) {}

  static void start(std::shared_ptr<SucceededPoller> self, asio::io_context& io);
  void stop() { stopped_ = true; }
  std::int64_t done() const { return done_.load(); }
  Clock::time_point last_change() const {
    return Clock::time_point(Clock::duration(last_change_ticks_.load()));
  }

 private:
  // `self` keeps the poller alive until the loop has seen stop().
  static asio::awaitable<void> loop(std::shared_ptr<SucceededPoller> self);

  std::unique_ptr<HttpConnection> master_;
  std::int64_t base_;
  std::atomic<std::int64_t> done_{0};
  std::atomic<std::int64_t> last_change_ticks_{0};
  std::atomic<bool> stopped_{false};
};

struct Runner {
  WorkerEndpoint* endpoint = nullptr;       // the built-in worker; nullptr for an external one
  std::shared_ptr<SucceededPoller> poller;  // an external worker's jobs done
  std::string id;                           // the registration
  std::string kind;                         // noop | decode | external

  // Jobs done since the runner started.
  std::int64_t done() const {
    return endpoint ? endpoint->answered() - answered_before : poller->done();
  }
  Clock::time_point last_done() const {
    return endpoint ? endpoint->last_answer() : poller->last_change();
  }

  std::int64_t answered_before = 0;  // the built-in worker's answers before the runner started
};

// Starts the worker the options name and registers it with the options' worker concurrency.
asio::awaitable<Expected<Runner, std::string>> start_runner(Bench& bench, HttpConnection& master);

// Removes the registration and stops the poller; what failed before does not matter.
asio::awaitable<void> stop_runner(HttpConnection& master, Runner& runner);

// The figures that say which worker ran the jobs: worker (noop | decode | external) and
// worker_concurrency.
void add_runner(Outcome& out, const Runner& runner, const Options& o);

}  // namespace jq::bench
