// Who runs a scenario's jobs: jqbench's built-in worker endpoint, or an external worker (e.g.
// jqworker or a Node worker, in a process of its own) at --external-worker URL. Either way
// jqbench registers it with the master for every name and removes the registration afterwards.
// The built-in worker counts the answers it wrote; an external one is asked nothing: jobs done
// are `succeeded` of GET /v1/stats (so "done" is the master having stored the outcome).
//
// Each GET /v1/stats is work for the master and Redis (a script per shard), which would count
// towards the CPU and the Redis commands per job being measured. So the poller reads it as
// seldom as it can while still seeing the run's end promptly: with the expected total known
// (expect()), it waits a quarter of the time the jobs left should take at the rate last seen,
// between 2 and 100 ms (about 20 reads in a run of 1-2 s, the end seen within a few ms);
// without it, every 10 ms. Scenarios that learn of each job's end themselves (steady: its
// result) start no poller.
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
  void expect(std::int64_t total) { target_ = total; }
  std::int64_t done() const { return done_.load(); }
  std::int64_t polls() const { return polls_.load(); }
  Clock::time_point last_change() const {
    return Clock::time_point(Clock::duration(last_change_ticks_.load()));
  }

 private:
  // `self` keeps the poller alive until the loop has seen stop().
  static asio::awaitable<void> loop(std::shared_ptr<SucceededPoller> self);
  // How long to wait before the next read, given the rate between the last two.
  Clock::duration next_wait(double jobs_per_s) const;

  std::unique_ptr<HttpConnection> master_;
  std::int64_t base_;
  std::atomic<std::int64_t> target_{0};  // 0: unknown
  std::atomic<std::int64_t> done_{0};
  std::atomic<std::int64_t> polls_{0};
  std::atomic<std::int64_t> last_change_ticks_{0};
  std::atomic<bool> stopped_{false};
};

struct Runner {
  WorkerEndpoint* endpoint = nullptr;       // the built-in worker; nullptr for an external one
  std::shared_ptr<SucceededPoller> poller;  // an external worker's jobs done, when counted
  std::string id;                           // the registration
  std::string kind;                         // noop | decode | external

  // Jobs done since the runner started (an external worker's, only when counted).
  std::int64_t done() const {
    if (endpoint) return endpoint->answered() - answered_before;
    return poller ? poller->done() : 0;
  }
  Clock::time_point last_done() const {
    if (endpoint) return endpoint->last_answer();
    return poller ? poller->last_change() : Clock::time_point();
  }
  // The jobs the scenario will have run in all, when known: the poller slows down until then.
  void expect(std::int64_t total) {
    if (poller) poller->expect(total);
  }

  std::int64_t answered_before = 0;  // the built-in worker's answers before the runner started
};

enum class CountDone {
  yes,  // done() counts jobs (an external worker's by polling GET /v1/stats)
  no,   // the scenario learns of each job's end by itself: no polling
};

// Starts the worker the options name and registers it with the options' worker concurrency.
asio::awaitable<Expected<Runner, std::string>> start_runner(Bench& bench, HttpConnection& master,
                                                            CountDone count = CountDone::yes);

// Removes the registration and stops the poller; what failed before does not matter.
asio::awaitable<void> stop_runner(HttpConnection& master, Runner& runner);

// The figures that say which worker ran the jobs: worker (noop | decode | external),
// worker_concurrency, and for a polled external worker stats_polls (GET /v1/stats made).
void add_runner(Outcome& out, const Runner& runner, const Options& o);

}  // namespace jq::bench
