// steady: the pusher that waits for its result, at a moderate fixed rate. Single jobs with
// keep_result are pushed open loop at --rate (open_loop.hpp); right after each 201 the job's
// result is long-polled (GET /v1/jobs/{id}/result?wait=30) on a connection of a second pool.
// Reported: push-to-result-fetched percentiles (from the push's send to the result's body read),
// the CPU of every watched process per job, and with --redis-url Redis's commands per job. The
// worker is the built-in one or --external-worker.
#include <cmath>

#include "cmd/jqbench/open_loop.hpp"
#include "cmd/jqbench/runner.hpp"
#include "cmd/jqbench/scenarios.hpp"

namespace jq::bench {

asio::awaitable<Outcome> run_steady(Bench& bench) {
  const Options& o = bench.options();
  auto master = bench.connect();
  auto idle = co_await expect_no_jobs(*master);
  if (!idle) co_return failed("steady", idle.error());
  // Each job's fetched result says it is done: no polling of GET /v1/stats.
  auto runner = co_await start_runner(bench, *master, CountDone::no);
  if (!runner) co_return failed("steady", runner.error());

  OpenLoopPlan plan;
  plan.shape = job_shape(o);
  plan.shape.keep_result = true;
  plan.fetch_results = true;
  plan.rate = o.rate;
  plan.warmup_jobs = static_cast<std::int64_t>(std::llround(o.rate * o.warmup.count()));
  plan.measured_jobs =
      o.jobs ? *o.jobs : static_cast<std::int64_t>(std::llround(o.rate * o.duration.count()));
  CpuMeter meter(o.watched);
  const auto redis_before = redis_stats(o.redis_url);
  auto figures = co_await run_open_loop(bench, runner->endpoint, plan, meter);
  const auto redis_after = redis_stats(o.redis_url);
  co_await stop_runner(*master, *runner);
  if (!figures) co_return failed("steady", figures.error());

  Outcome out;
  out.fields["scenario"] = "steady";
  out.fields["rate_offered_per_s"] = figure(o.rate);
  out.fields["warmup_jobs"] = plan.warmup_jobs;
  out.fields["format"] = format_name(o.format);
  add_runner(out, *runner, o);
  add_open_loop(out, *figures, "");
  add_cpu(out, meter, figures->jobs);
  // The warm-up counts too: the command counts cannot tell its jobs apart.
  add_redis_per_job(out, "", redis_before, redis_after, plan.warmup_jobs + plan.measured_jobs);
  co_return out;
}

}  // namespace jq::bench
