// latency: single jobs pushed at a fixed rate, open loop (open_loop.hpp): percentiles of ack, of
// dispatch to the worker and of push-to-completion.
#include <cmath>

#include "cmd/jqbench/open_loop.hpp"
#include "cmd/jqbench/scenarios.hpp"

namespace jq::bench {

asio::awaitable<Outcome> run_latency(Bench& bench) {
  const Options& o = bench.options();
  auto master = bench.connect();
  auto idle = co_await expect_no_jobs(*master);
  if (!idle) co_return failed("latency", idle.error());
  WorkerEndpoint& worker = bench.worker();
  worker.start();
  auto worker_id = co_await register_worker(*master, worker.url(), o.worker_concurrency);
  if (!worker_id) co_return failed("latency", worker_id.error());

  OpenLoopPlan plan;
  plan.shape = job_shape(o);
  plan.rate = o.rate;
  plan.warmup_jobs = static_cast<std::int64_t>(std::llround(o.rate * o.warmup.count()));
  plan.measured_jobs =
      o.jobs ? *o.jobs : static_cast<std::int64_t>(std::llround(o.rate * o.duration.count()));
  CpuMeter meter(o.watched);
  auto figures = co_await run_open_loop(bench, &worker, plan, meter);
  co_await remove_worker(*master, *worker_id);
  if (!figures) co_return failed("latency", figures.error());

  Outcome out;
  out.fields["scenario"] = "latency";
  out.fields["rate_offered_per_s"] = figure(o.rate);
  out.fields["warmup_jobs"] = plan.warmup_jobs;
  out.fields["worker_concurrency"] = o.worker_concurrency;
  add_open_loop(out, *figures, "");
  add_cpu(out, meter, figures->jobs);
  co_return out;
}

}  // namespace jq::bench
