// Every route the master serves, and what their handlers use of the daemon. The Daemon and
// route_table() both build their Router with add_routes, so `jqmaster --routes` (and the
// OpenAPI drift check) sees exactly what is served.
#pragma once

#include <atomic>
#include <functional>

#include <boost/asio/awaitable.hpp>

#include "api/job.hpp"
#include "src/events/result_waiters.hpp"
#include "src/http/handlers/jobs.hpp"
#include "src/http/router.hpp"
#include "src/metrics/metrics.hpp"
#include "src/schedules/schedule_store.hpp"
#include "src/store/constraint_set.hpp"
#include "src/store/constraint_store.hpp"
#include "src/store/job_store.hpp"
#include "src/store/queue_store.hpp"
#include "src/workers/worker_store.hpp"

namespace jq::app {

// What the route handlers use of the daemon.
struct RouteDeps {
  const std::atomic<bool>& stopping;
  store::JobStore& jobs;
  api::JobDefaults defaults;
  events::ResultWaiters& waiters;
  http::PushedHook on_pushed;
  workers::WorkerStore& workers;
  store::QueueStore& queues;
  std::function<void()> on_paused_changed;
  std::function<void()> on_workers_changed;
  metrics::Metrics& metrics;
  store::ConstraintStore& constraints;
  std::function<boost::asio::awaitable<void>()> on_constraints_changed;
  schedules::ScheduleStore& schedules;
  store::ConstraintCache& constraint_cache;  // the snapshot pushes match against
};

// Every route the master serves.
void add_routes(http::Router& router, const RouteDeps& d);

}  // namespace jq::app
