#include "src/app/routes.hpp"

#include <chrono>

#include <boost/asio/io_context.hpp>

#include "src/app/app.hpp"
#include "src/http/handlers/constraints.hpp"
#include "src/http/handlers/dashboard.hpp"
#include "src/http/handlers/health.hpp"
#include "src/http/handlers/metrics.hpp"
#include "src/http/handlers/queues.hpp"
#include "src/http/handlers/schedules.hpp"
#include "src/http/handlers/workers.hpp"
#include "src/redis/client.hpp"

namespace jq::app {

namespace asio = boost::asio;

void add_routes(http::Router& router, const RouteDeps& d) {
  http::add_health_routes(router, d.queues, d.jobs, d.stopping);
  http::add_job_routes(router, d.jobs, d.defaults, d.waiters, d.on_pushed, d.stopping);
  http::add_worker_routes(router, d.workers, d.on_workers_changed);
  http::add_queue_routes(router, d.queues, d.on_paused_changed);
  http::add_constraint_routes(router, d.constraints, d.constraint_cache, d.on_constraints_changed);
  http::add_metrics_routes(router, d.metrics, d.queues, d.workers, d.constraints, d.schedules);
  http::add_dashboard_routes(router);
  http::add_schedule_routes(router, d.schedules);
}

std::vector<std::pair<std::string, std::string>> route_table() {
  std::vector<std::pair<std::string, std::string>> table;
  asio::io_context io;
  {
    // The same objects the Daemon hands its routes, never started: nothing connects, and no
    // handler runs; the router is only read.
    redis::Client redis(io.get_executor(), redis::ConnectionOptions{});
    redis::Keys keys;
    std::atomic<bool> stopping{false};
    events::ResultWaiters waiters;
    store::JobStore jobs(redis, keys, 1, std::chrono::system_clock::now);
    store::QueueStore queues(redis, keys, 1, std::chrono::system_clock::now);
    workers::WorkerStore workers(redis, keys, std::chrono::system_clock::now, "routes");
    store::ConstraintStore constraints(redis, keys, 1, std::chrono::system_clock::now);
    schedules::ScheduleStore schedules(redis, keys, 1, std::chrono::system_clock::now,
                                       api::JobDefaults{});
    store::ConstraintCache constraint_cache(io.get_executor(), constraints);
    metrics::Metrics metrics(1);
    http::Router router;
    add_routes(router, RouteDeps{stopping, jobs, api::JobDefaults{}, waiters,
                                 [](const http::Pushed&) {}, workers, queues, [] {}, [] {}, metrics,
                                 constraints, []() -> asio::awaitable<void> { co_return; },
                                 schedules, constraint_cache});
    for (const http::Route& r : router.routes()) {
      table.emplace_back(std::string(http::to_string(r.method)), r.pattern);
    }
  }
  io.poll();  // the Redis client's stop() was queued on its strand; let it finish
  return table;
}

}  // namespace jq::app
