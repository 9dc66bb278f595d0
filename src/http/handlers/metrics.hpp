// GET /metrics: the Prometheus text format (open, also with auth on).
//
// First what this master keeps itself (src/metrics/metrics.hpp), then gauges read from Redis at
// scrape time: per queue ready, scheduled, running, dead and lag, for the job names that have
// their own label (names past metrics.max_job_names are not read, so a scrape's cost stays
// bounded however many names exist), per registered worker endpoint whether it is healthy, and
// per constraint its waiting and running jobs, its limits and its start and hold counters (one
// script call), and per schedule its runs, skipped ticks by reason and next tick. When Redis does
// not answer, those series have no samples and the rest is served as usual.
#pragma once

#include "src/http/router.hpp"
#include "src/metrics/metrics.hpp"
#include "src/schedules/schedule_store.hpp"
#include "src/store/constraint_store.hpp"
#include "src/store/queue_store.hpp"
#include "src/workers/worker_store.hpp"

namespace jq::http {

void add_metrics_routes(Router& router, metrics::Metrics& metrics, store::QueueStore& queues,
                        workers::WorkerStore& workers, store::ConstraintStore& constraints,
                        schedules::ScheduleStore& schedules);

}  // namespace jq::http
