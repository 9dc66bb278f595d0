// jqmaster's own metrics: what this process counts and times as it runs (jobs pushed and their
// attempts' outcomes by job name, in-flight attempts and round trips by worker endpoint, push,
// push-to-done and Redis latencies, HTTP requests by route). The queue and worker-health gauges
// are not kept here: they are read from Redis at scrape time (src/http/handlers/metrics.cpp).
//
// Job names and worker URLs come from outside, so both are capped (metrics.max_job_names,
// kMaxWorkerLabels): values past the cap are counted under "_other". Each name's or endpoint's
// children are looked up once and cached, so the hot paths (a push, an attempt, a Redis
// command) only take a shared lock, hash a name and bump atomics.
#pragma once

#include <cstddef>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <tuple>

#include "src/metrics/capped_labels.hpp"
#include "src/metrics/registry.hpp"

namespace jq::metrics {

// Distinct worker URLs with their own label; registrations are few in practice, so this is a
// safety net rather than a setting.
inline constexpr std::size_t kMaxWorkerLabels = 1000;

class Metrics {
 public:
  explicit Metrics(std::size_t max_job_names);
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // This master's events for one job name.
  struct Job {
    Counter& pushed;
    Counter& dispatched;  // attempts sent to a worker
    Counter& succeeded;
    Counter& failed;   // attempts that failed (each retry's failure counts)
    Counter& retried;  // failures that scheduled another attempt
    Counter& dead;     // failures that were final
  };
  const Job& job(std::string_view name) { return jobs_.get(name); }
  // True when `name` has its own label (false: it is counted under "_other").
  bool has_own_label(std::string_view name) { return jobs_.admits(name); }

  // This master's attempts on one worker endpoint, by URL.
  struct Worker {
    Gauge& inflight;
    Gauge& reserved_ahead;         // jobs reserved for it while its slots are all taken
    Histogram& dispatch_duration;  // seconds, request sent to answer (or timeout)
  };
  const Worker& worker(std::string_view url) { return workers_.get(url); }
  // Whether `url` has its own label (not "other"); if so its children exist afterwards.
  bool worker_has_own_label(std::string_view url) { return workers_.admits(url); }

  Histogram& push_duration() { return push_duration_; }  // seconds, request to 201
  Histogram& job_latency() { return job_latency_; }      // seconds, enqueued_at to done or dead
  Histogram& redis_command_duration() { return redis_command_duration_; }  // seconds, per call
  // Seconds this machine's clock is ahead of the clock of the Redis holding the masters'
  // heartbeats (negative: behind), which this master keeps job times on (SharedClock).
  Gauge& clock_offset() { return clock_offset_; }

  // jq_redis_errors_total for a kind of failed Redis call (redis::error_kind: "oom", ...).
  Counter& redis_error(std::string_view kind) { return redis_errors_.with({std::string(kind)}); }

  // jq_http_requests_total for a route pattern ("unmatched" when none), method and status.
  Counter& http_request(std::string_view route, std::string_view method, int status);

  // Every family kept here, in the text format.
  void expose(std::string& out) const { registry_.expose(out); }

 private:
  Job make_job(const std::string& name);
  Worker make_worker(const std::string& url);

  Registry registry_;
  Family<Counter>& pushed_;
  Family<Counter>& dispatched_;
  Family<Counter>& succeeded_;
  Family<Counter>& failed_;
  Family<Counter>& retried_;
  Family<Counter>& dead_;
  Family<Gauge>& inflight_;
  Family<Gauge>& reserved_ahead_;
  Family<Histogram>& dispatch_duration_;
  Histogram& push_duration_;
  Histogram& job_latency_;
  Histogram& redis_command_duration_;
  Gauge& clock_offset_;
  Family<Counter>& redis_errors_;
  Family<Counter>& http_requests_;
  CappedLabels<Job> jobs_;
  CappedLabels<Worker> workers_;

  using RequestKey = std::tuple<std::string, std::string, int>;
  std::shared_mutex requests_mutex_;
  std::map<RequestKey, Counter*, std::less<>> requests_;
};

}  // namespace jq::metrics
