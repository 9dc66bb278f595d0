// Closed-loop pushers: `connections` coroutines, each on its own keep-alive connection, each
// POSTing the next single job or batch as soon as the previous one is acknowledged, until the
// job count or the deadline is reached. Optionally each pusher then fetches the result of every
// job it pushed (waiting for it), and pushers hold back while too many jobs are pushed but not
// yet done.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cmd/jqbench/bench.hpp"
#include "cmd/jqbench/job_codec.hpp"

namespace jq::bench {

struct PushPlan {
  int batch = 1;  // 1: a single job (a map); more: an array
  int connections = 1;
  std::optional<std::int64_t> jobs;  // in total; else until `until`
  Clock::time_point until = Clock::time_point::max();
  bool fetch_results = false;          // GET each pushed job's result (?wait=)
  std::int64_t window = 0;             // 0: no limit
  std::function<std::int64_t()> done;  // jobs done so far, for the window
};

class PushLoad {
 public:
  PushLoad(Bench& bench, PushPlan plan, JobShape shape);

  // Runs the pushers; returns when all have stopped. Shows the jobs acknowledged so far.
  asio::awaitable<void> run(Progress& progress);

  std::int64_t acked() const { return acked_.load(); }
  std::int64_t fetched() const { return fetched_.load(); }
  std::int64_t requests() const { return requests_.load(); }
  std::int64_t errors() const { return errors_.load(); }
  std::string first_error() const;
  Clock::time_point last_fetch() const;
  // Time from sending each POST /v1/jobs to reading its answer.
  std::vector<Clock::duration> take_ack_samples();

 private:
  asio::awaitable<void> pusher(int index);
  asio::awaitable<bool> fetch_results(HttpConnection& master, std::string_view ids_body);
  asio::awaitable<void> hold_back();
  int claim();
  void fail(std::string message);

  Bench& bench_;
  PushPlan plan_;
  JobShape shape_;
  std::atomic<std::int64_t> claimed_{0};
  std::atomic<std::int64_t> acked_{0};
  std::atomic<std::int64_t> fetched_{0};
  std::atomic<std::int64_t> requests_{0};
  std::atomic<std::int64_t> errors_{0};
  std::atomic<std::int64_t> last_fetch_ticks_{0};
  std::atomic<int> running_{0};
  mutable std::mutex mutex_;
  std::string first_error_;
  std::vector<Clock::duration> ack_samples_;
};

}  // namespace jq::bench
