#include "src/http/handlers/metrics.hpp"

#include <chrono>
#include <cstdint>
#include <string_view>
#include <vector>

#include <spdlog/spdlog.h>

namespace jq::http {
namespace {

using metrics::Desc;
using metrics::ScrapedSample;
using metrics::Type;

// One gauge per field of a queue's counts.
struct QueueGauge {
  std::string_view name;
  std::string_view help;
  double (*value)(const store::QueueInfo& q);
};

constexpr QueueGauge kQueueGauges[] = {
    {"jq_queue_ready", "Jobs ready to run (never run, or due for retry), all shards.",
     [](const store::QueueInfo& q) { return static_cast<double>(q.ready); }},
    {"jq_queue_scheduled", "Jobs waiting for a retry's backoff.",
     [](const store::QueueInfo& q) { return static_cast<double>(q.scheduled); }},
    {"jq_queue_running", "Jobs in flight on a worker, any master's.",
     [](const store::QueueInfo& q) { return static_cast<double>(q.running); }},
    {"jq_queue_dead", "Jobs that failed for good and are kept in the dead set.",
     [](const store::QueueInfo& q) { return static_cast<double>(q.dead); }},
    {"jq_queue_lag_seconds",
     "Age of the oldest job a worker could take now (0 when none); jobs held by a constraint or an "
     "ordering key are not counted.",
     [](const store::QueueInfo& q) { return q.lag_seconds; }},
};

// One series per constraint total, labelled by `constraint`. The counters live in Redis, shared
// by every master: each master shows the same value (do not sum them across masters).
struct ConstraintSeries {
  std::string_view name;
  std::string_view help;
  Type type;
  std::int64_t store::ConstraintTotals::*value;
};

constexpr ConstraintSeries kConstraintSeries[] = {
    {"jq_constraint_waiting_jobs", "Queued jobs the constraint holds back now, over all its keys.",
     Type::gauge, &store::ConstraintTotals::waiting},
    {"jq_constraint_running_jobs",
     "Attempts running now that count against the constraint (any master's), over all its keys.",
     Type::gauge, &store::ConstraintTotals::running},
    {"jq_constraint_started_total",
     "Jobs the constraint let start, since the data store was created (all masters).",
     Type::counter, &store::ConstraintTotals::started},
    {"jq_constraint_deferred_total",
     "Times the constraint held a job back at dispatch, since the data store was created (all "
     "masters); a job held again after it was woken counts again.",
     Type::counter, &store::ConstraintTotals::deferred},
};

constexpr std::string_view kConstraintLimitHelp =
    "The constraint's limit (per key when it has a key): kind=\"concurrency\" is how many of its "
    "jobs may run at once; kind=\"rate\" is its rate in starts per second (limit / period, burst "
    "not included).";

Desc gauge_desc(std::string_view name, std::string_view help, std::string label) {
  return Desc{std::string(name), std::string(help), Type::gauge, {std::move(label)}};
}

// The counts of the queues whose names have their own label; empty when Redis does not answer.
asio::awaitable<std::vector<store::QueueInfo>> read_queues(metrics::Metrics& metrics,
                                                           store::QueueStore& queues) {
  auto names = co_await queues.names();
  if (!names) {
    spdlog::debug("metrics: queue names not read: {}", names.error().message);
    co_return std::vector<store::QueueInfo>();
  }
  std::vector<std::string> own;
  for (std::string& name : *names) {
    if (metrics.has_own_label(name)) own.push_back(std::move(name));
  }
  auto counts = co_await queues.counts(std::move(own));
  if (!counts) {
    spdlog::debug("metrics: queue counts not read: {}", counts.error().message);
    co_return std::vector<store::QueueInfo>();
  }
  co_return std::move(*counts);
}

// jq_worker_healthy of every registered endpoint with its own label (1 or 0). Asking whether an
// endpoint has its own label makes its in-flight and round-trip children, so an endpoint shows
// zeros before its first attempt.
asio::awaitable<std::vector<ScrapedSample>> read_worker_health(metrics::Metrics& metrics,
                                                               workers::WorkerStore& workers) {
  std::vector<ScrapedSample> samples;
  auto views = co_await workers.load_with_stats();
  if (!views) co_return samples;
  for (const auto& v : *views) {
    const std::string& url = v.endpoint.url;
    if (!metrics.worker_has_own_label(url)) continue;
    samples.push_back(ScrapedSample{{url}, v.stats.healthy ? 1.0 : 0.0});
  }
  co_return samples;
}

// Every constraint's totals; empty when Redis does not answer. Constraints are made by admins,
// not pushers, so their names are not capped as job names are.
asio::awaitable<std::vector<store::ConstraintTotals>> read_constraints(
    store::ConstraintStore& constraints) {
  auto totals = co_await constraints.totals();
  if (!totals) {
    spdlog::debug("metrics: constraint totals not read: {}", totals.error().message);
    co_return std::vector<store::ConstraintTotals>();
  }
  co_return std::move(*totals);
}

// Every schedule as stored; empty when Redis does not answer. Made by admins, so not capped.
asio::awaitable<std::vector<schedules::StoredSchedule>> read_schedules(
    schedules::ScheduleStore& schedules) {
  auto all = co_await schedules.list();
  if (!all) {
    spdlog::debug("metrics: schedules not read: {}", all.error().message);
    co_return std::vector<schedules::StoredSchedule>();
  }
  co_return std::move(*all);
}

// The counters live in each schedule's record in Redis, shared by every master (as the
// constraint counters: do not sum them across masters).
void write_schedule_series(std::string& out, const std::vector<schedules::StoredSchedule>& all) {
  std::vector<ScrapedSample> runs, skipped, next;
  for (const schedules::StoredSchedule& s : all) {
    const std::string& name = s.schedule.name;
    const schedules::ScheduleRecord& r = s.record;
    runs.push_back(ScrapedSample{{name}, static_cast<double>(r.runs)});
    skipped.push_back(ScrapedSample{{name, "overlap"}, static_cast<double>(r.skipped)});
    skipped.push_back(ScrapedSample{{name, "missed"}, static_cast<double>(r.missed)});
    skipped.push_back(ScrapedSample{{name, "duplicate"}, static_cast<double>(r.duplicates)});
    if (r.next_ms > 0) {
      next.push_back(ScrapedSample{{name}, static_cast<double>(r.next_ms) / 1000.0});
    }
  }
  metrics::write_scraped(out,
                         Desc{"jq_schedule_runs_total",
                              "Jobs the schedule made (ticks and runs now), since it was created "
                              "(all masters).",
                              Type::counter,
                              {"schedule"}},
                         runs);
  metrics::write_scraped(
      out,
      Desc{"jq_schedule_skipped_total",
           "Ticks of the schedule that made no job, since it was created (all masters): "
           "reason=\"overlap\" the previous job had not finished (overlap: skip), "
           "reason=\"missed\" no master could make it within 1 s of its time, "
           "reason=\"duplicate\" its job's unique_key was held by a live job.",
           Type::counter,
           {"schedule", "reason"}},
      skipped);
  metrics::write_scraped(out,
                         gauge_desc("jq_schedule_next_run_timestamp_seconds",
                                    "When the schedule ticks next (Unix time); no sample while it "
                                    "is paused or has ended.",
                                    "schedule"),
                         next);
}

void write_queue_gauges(std::string& out, const std::vector<store::QueueInfo>& counts) {
  for (const QueueGauge& gauge : kQueueGauges) {
    std::vector<ScrapedSample> samples;
    samples.reserve(counts.size());
    for (const store::QueueInfo& q : counts)
      samples.push_back(ScrapedSample{{q.name}, gauge.value(q)});
    metrics::write_scraped(out, gauge_desc(gauge.name, gauge.help, "name"), samples);
  }
}

void write_constraint_series(std::string& out, const std::vector<store::ConstraintTotals>& totals) {
  for (const ConstraintSeries& series : kConstraintSeries) {
    std::vector<ScrapedSample> samples;
    samples.reserve(totals.size());
    for (const store::ConstraintTotals& t : totals) {
      samples.push_back(ScrapedSample{{t.constraint.name}, static_cast<double>(t.*series.value)});
    }
    metrics::write_scraped(
        out, Desc{std::string(series.name), std::string(series.help), series.type, {"constraint"}},
        samples);
  }
  std::vector<ScrapedSample> limits;
  for (const store::ConstraintTotals& t : totals) {
    const api::Constraint& c = t.constraint;
    if (c.concurrency)
      limits.push_back(ScrapedSample{{c.name, "concurrency"}, static_cast<double>(*c.concurrency)});
    if (c.rate) {
      const double period_s = std::chrono::duration<double>(c.rate->period).count();
      limits.push_back(
          ScrapedSample{{c.name, "rate"}, static_cast<double>(c.rate->limit) / period_s});
    }
  }
  metrics::write_scraped(out,
                         Desc{"jq_constraint_limit",
                              std::string(kConstraintLimitHelp),
                              Type::gauge,
                              {"constraint", "kind"}},
                         limits);
}

asio::awaitable<Response> scrape(metrics::Metrics& metrics, store::QueueStore& queues,
                                 workers::WorkerStore& workers, store::ConstraintStore& constraints,
                                 schedules::ScheduleStore& schedules) {
  const std::vector<store::QueueInfo> counts = co_await read_queues(metrics, queues);
  const std::vector<ScrapedSample> health = co_await read_worker_health(metrics, workers);
  const std::vector<store::ConstraintTotals> totals = co_await read_constraints(constraints);
  const std::vector<schedules::StoredSchedule> all = co_await read_schedules(schedules);
  Response r;
  r.content_type = metrics::kContentType;
  metrics.expose(r.body);
  write_queue_gauges(r.body, counts);
  metrics::write_scraped(r.body,
                         gauge_desc("jq_worker_healthy",
                                    "1 when the worker endpoint is reachable, 0 while it is held "
                                    "off after a connection failure.",
                                    "worker"),
                         health);
  write_constraint_series(r.body, totals);
  write_schedule_series(r.body, all);
  co_return r;
}

}  // namespace

void add_metrics_routes(Router& router, metrics::Metrics& metrics, store::QueueStore& queues,
                        workers::WorkerStore& workers, store::ConstraintStore& constraints,
                        schedules::ScheduleStore& schedules) {
  router.add(Method::get, "/metrics",
             [&metrics, &queues, &workers, &constraints, &schedules](Request&) {
               return scrape(metrics, queues, workers, constraints, schedules);
             });
}

}  // namespace jq::http
