// Runs attempts: one reserved job, one POST to its worker endpoint, and the outcome recorded
// in the store (success, failure with retry or death, or release when the attempt does not
// count). The caller hears what it learned about the endpoint as soon as the answer is in; the
// endpoint's slot stays the caller's (the scheduler keeps it for the next job or gives it back).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string_view>

#include <boost/asio/io_context.hpp>

#include "src/dispatch/worker_call.hpp"
#include "src/events/result_waiters.hpp"
#include "src/metrics/metrics.hpp"
#include "src/store/dispatch_store.hpp"
#include "src/workers/endpoint.hpp"
#include "src/workers/worker_store.hpp"

namespace jq::dispatch {

struct AttemptEnd {
  enum class Verdict { answered, busy, unreachable };
  Verdict verdict = Verdict::answered;
  std::chrono::milliseconds hold_off{0};  // busy: Retry-After or a short pause
  std::string error;                      // unreachable: why
  std::chrono::microseconds took{0};      // answered: from sending the request to the answer
};

struct DispatchOptions {
  // The longest a worker's Retry-After holds its endpoint back (dispatch.max_busy_pause).
  std::chrono::milliseconds max_busy_pause{300'000};
  // A worker's answer body beyond this is a failure, never stored (limits.max_result_bytes).
  std::uint64_t max_result_bytes = 1 << 20;
};

class Dispatcher {
 public:
  using Done = std::function<void(AttemptEnd)>;

  // `waiters`: this master's long polls, which get a result straight from the worker's answer
  // when they wait for it here.
  Dispatcher(boost::asio::io_context& io, store::DispatchStore& store,
             workers::WorkerStore& workers, events::ResultWaiters& waiters,
             metrics::Metrics& metrics, DispatchOptions options);

  // Starts the attempt in the background; `done` runs on any thread once the endpoint answered
  // (or the attempt ended without an answer), possibly before the outcome is recorded. The
  // caller said will_run(job) before, once.
  void start(std::shared_ptr<const workers::Endpoint> endpoint,
             std::shared_ptr<ConnectionPool> pool, store::ReservedJob job, Done done);
  // The job's attempt will run here: polls of its result wait for it without asking Redis. For
  // a job taken at once, said before its push is answered, so that its pusher's first poll
  // finds it. The attempt's end (or wont_run) ends it.
  void will_run(const store::ReservedJob& job);
  // It will not after all (its endpoint went away before start()).
  void wont_run(const store::ReservedJob& job);
  std::size_t in_flight() const { return in_flight_.load(); }

 private:
  boost::asio::awaitable<void> attempt(std::shared_ptr<const workers::Endpoint> endpoint,
                                       std::shared_ptr<ConnectionPool> pool, store::ReservedJob job,
                                       Done done);
  // Calls `done` (and clears it) as soon as the endpoint's answer is judged.
  boost::asio::awaitable<void> run_attempt(const workers::Endpoint& endpoint, ConnectionPool& pool,
                                           store::ReservedJob job, Done& done);
  // This master's counters (and push-to-done latency) for an outcome the store recorded.
  void count_success(const store::JobRecord& record);
  void count_failure(const store::JobRecord& record, store::FailOutcome outcome);
  // Records the success; a kept result goes straight to this master's polls waiting for it.
  boost::asio::awaitable<bool> complete(const store::ReservedJob& job, const std::string& id,
                                        int attempt, std::string result);
  // `record()` (the store call of a worker's answer, whose first call answered `r`) made again,
  // after a growing pause, while Redis cannot take it (unavailable, out of memory) and the reaper
  // could not have taken the attempt yet: a restart or failover of Redis must not turn a worker's
  // answer into a timeout. completeJobs and failJob are fenced by the attempt (it ends there), so
  // one that ran and lost its reply answers "stale" when made again. `failed()` runs before the
  // first call made again.
  template <class Result, class Record, class Failed>
  boost::asio::awaitable<Result> again_while_unavailable(const store::ReservedJob& job,
                                                         std::string_view what, Result r,
                                                         Record record, Failed failed);

  boost::asio::io_context& io_;
  store::DispatchStore& store_;
  workers::WorkerStore& workers_;
  events::ResultWaiters& waiters_;
  metrics::Metrics& metrics_;
  DispatchOptions options_;
  std::atomic<std::size_t> in_flight_{0};
};

}  // namespace jq::dispatch
