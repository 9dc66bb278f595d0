#include "src/metrics/metrics.hpp"

#include <mutex>

namespace jq::metrics {
namespace {

// Bucket bounds in seconds, chosen for what each histogram usually sees.
// A push is one Redis round trip: well under a millisecond to a few.
const std::vector<double> kPushBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                          0.01,   0.025,   0.05,   0.1,   0.25,   1};
// A worker's round trip is the job's run time: milliseconds to the longest timeout (a day).
const std::vector<double> kDispatchBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                              0.25,  0.5,    1,     2.5,  5,     10,   30,
                                              60,    300,    1800,  3600, 86400};
// Push to done adds waiting in the queue and retries' backoff.
const std::vector<double> kLatencyBuckets = {
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400};
// One Redis command or script call, or one pipeline of them, on the same machine or network.
const std::vector<double> kRedisBuckets = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                           0.005,   0.01,   0.025,   0.05,   0.1,   1};

}  // namespace

Metrics::Metrics(std::size_t max_job_names)
    : pushed_(
          registry_.counter("jq_jobs_pushed_total", "Jobs pushed through this master.", {"name"})),
      dispatched_(registry_.counter("jq_jobs_dispatched_total",
                                    "Attempts this master sent to a worker endpoint.", {"name"})),
      succeeded_(registry_.counter("jq_jobs_succeeded_total",
                                   "Attempts of this master that succeeded.", {"name"})),
      failed_(registry_.counter("jq_jobs_failed_total",
                                "Attempts of this master that failed (retried or not).", {"name"})),
      retried_(registry_.counter("jq_jobs_retried_total",
                                 "Failed attempts of this master that scheduled a retry.",
                                 {"name"})),
      dead_(registry_.counter("jq_jobs_dead_total",
                              "Jobs whose failure on this master was final (moved to dead).",
                              {"name"})),
      inflight_(registry_.gauge("jq_worker_inflight",
                                "Attempts this master has in flight on a worker endpoint.",
                                {"worker"})),
      reserved_ahead_(registry_.gauge("jq_worker_reserved_ahead",
                                      "Jobs this master has reserved for a worker endpoint whose "
                                      "slots are all taken, to start as they free "
                                      "(dispatch.reserve_ahead).",
                                      {"worker"})),
      dispatch_duration_(registry_.histogram(
          "jq_dispatch_duration_seconds",
          "Worker round trip of this master's attempts: request sent to answer or timeout.",
          kDispatchBuckets, {"worker"})),
      push_duration_(registry_
                         .histogram("jq_push_duration_seconds",
                                    "POST /v1/jobs from the request to its 201 answer.",
                                    kPushBuckets)
                         .only()),
      job_latency_(registry_
                       .histogram("jq_job_latency_seconds",
                                  "Push to done: enqueued_at to success or death, for jobs "
                                  "this master finished.",
                                  kLatencyBuckets)
                       .only()),
      redis_command_duration_(registry_
                                  .histogram("jq_redis_command_duration_seconds",
                                             "One Redis command, script call or pipeline, sent "
                                             "to answered.",
                                             kRedisBuckets)
                                  .only()),
      clock_offset_(registry_
                        .gauge("jq_clock_offset_seconds",
                               "This machine's clock minus the clock of the Redis holding the "
                               "masters' heartbeats, which job times follow (sync clocks when "
                               "far from 0).")
                        .only()),
      redis_errors_(registry_.counter(
          "jq_redis_errors_total",
          "Redis calls of this master that failed, by kind: a connection failure or a refusal "
          "by Redis (oom: over its maxmemory).",
          {"kind"})),
      http_requests_(registry_.counter("jq_http_requests_total",
                                       "HTTP requests answered, by route pattern, method and "
                                       "status.",
                                       {"route", "method", "status"})),
      jobs_(max_job_names, [this](const std::string& name) { return make_job(name); }),
      workers_(kMaxWorkerLabels, [this](const std::string& url) { return make_worker(url); }) {}

Metrics::Job Metrics::make_job(const std::string& name) {
  const LabelValues labels{name};
  return Job{pushed_.with(labels), dispatched_.with(labels), succeeded_.with(labels),
             failed_.with(labels), retried_.with(labels),    dead_.with(labels)};
}

Metrics::Worker Metrics::make_worker(const std::string& url) {
  const LabelValues labels{url};
  return Worker{inflight_.with(labels), reserved_ahead_.with(labels),
                dispatch_duration_.with(labels)};
}

Counter& Metrics::http_request(std::string_view route, std::string_view method, int status) {
  const std::tuple<std::string_view, std::string_view, int> key{route, method, status};
  {
    std::shared_lock lock(requests_mutex_);
    if (auto it = requests_.find(key); it != requests_.end()) return *it->second;
  }
  Counter& counter =
      http_requests_.with({std::string(route), std::string(method), std::to_string(status)});
  std::unique_lock lock(requests_mutex_);
  requests_.emplace(RequestKey{route, method, status}, &counter);
  return counter;
}

}  // namespace jq::metrics
