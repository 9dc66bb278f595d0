// e2e: pushers and the worker run together; a job is done when the worker has written its
// answer (built-in worker, keep_result=false), the master has stored its success (external
// worker, runner.hpp), or its pusher has fetched its result (keep_result=true).
// drain: a backlog is pushed first with no worker; then the worker registers and the master
// empties the backlog.
#include <algorithm>
#include <string>

#include "cmd/jqbench/push_load.hpp"
#include "cmd/jqbench/runner.hpp"
#include "cmd/jqbench/scenarios.hpp"

namespace jq::bench {
namespace {

constexpr std::int64_t kDrainJobs = 50000;
// The backlog goes in batches of up to 1,000 jobs and about 512 KiB, half the master's default
// limits.max_body_bytes: larger arguments make smaller batches.
constexpr int kFillBatch = 1000;
constexpr int kFillBatchBytes = 512 * 1024;
constexpr int kJobOverheadBytes = 64;  // a job's name and keys around its argument, at most

int fill_batch(const Options& o) {
  return std::clamp(kFillBatchBytes / (o.arg_bytes + kJobOverheadBytes), 1, kFillBatch);
}

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The figures e2e and drain share.
Outcome rate_outcome(const char* scenario, const Options& o, const Runner& runner,
                     std::int64_t jobs, double seconds, const CpuMeter& meter) {
  Outcome out;
  out.fields["scenario"] = scenario;
  out.fields["jobs"] = jobs;
  out.fields["seconds"] = figure(seconds);
  out.fields["jobs_per_s"] = figure(static_cast<double>(jobs) / seconds);
  out.fields["keep_result"] = o.keep_result;
  out.fields["format"] = format_name(o.format);
  add_runner(out, runner, o);
  add_cpu(out, meter, jobs);
  return out;
}

}  // namespace

asio::awaitable<Outcome> run_e2e(Bench& bench) {
  const Options& o = bench.options();
  auto master = bench.connect();
  auto idle = co_await expect_no_jobs(*master);
  if (!idle) co_return failed("e2e", idle.error());
  auto runner = co_await start_runner(bench, *master);
  if (!runner) co_return failed("e2e", runner.error());
  if (o.jobs) runner->expect(*o.jobs);

  const auto redis_before = redis_stats(o.redis_url);
  CpuMeter meter(o.watched);
  meter.start();
  const auto start = Clock::now();
  PushPlan plan;
  plan.batch = o.batch;
  plan.connections = o.connections;
  plan.jobs = o.jobs;
  if (!o.jobs) plan.until = start + std::chrono::duration_cast<Clock::duration>(o.duration);
  plan.fetch_results = o.keep_result;
  plan.window = o.window;
  PushLoad* load_ptr = nullptr;
  plan.done = [&runner, &load_ptr, keep = o.keep_result] {
    return keep ? load_ptr->fetched() : runner->done();
  };
  PushLoad load(bench, std::move(plan), job_shape(o));
  load_ptr = &load;
  Progress progress(o.progress);
  co_await load.run(progress);
  const std::int64_t pushed = load.acked();
  auto finished =
      co_await wait_for([&] { return load.errors() > 0 || runner->done() >= pushed; },
                        [&] { return runner->done(); }, o.completion_timeout, progress, "done");
  const auto end = o.keep_result ? load.last_fetch() : runner->last_done();
  meter.stop();
  const auto redis_after = redis_stats(o.redis_url);
  co_await stop_runner(*master, *runner);
  if (load.errors() > 0) co_return failed("e2e", load.first_error());
  if (!finished) co_return failed("e2e", finished.error());

  Outcome out = rate_outcome("e2e", o, *runner, pushed, seconds_between(start, end), meter);
  out.fields["batch"] = o.batch;
  out.fields["connections"] = o.connections;
  add_redis_per_job(out, "", redis_before, redis_after, pushed);
  co_return out;
}

asio::awaitable<Outcome> run_drain(Bench& bench) {
  const Options& o = bench.options();
  auto master = bench.connect();
  auto idle = co_await expect_no_jobs(*master);
  if (!idle) co_return failed("drain", idle.error());

  PushPlan fill;
  fill.batch = fill_batch(o);
  fill.connections = o.connections;
  fill.jobs = o.jobs.value_or(kDrainJobs);
  PushLoad load(bench, std::move(fill), job_shape(o));
  Progress progress(o.progress);
  co_await load.run(progress);
  if (load.errors() > 0) co_return failed("drain", load.first_error());
  const std::int64_t backlog = load.acked();

  const auto redis_before = redis_stats(o.redis_url);
  CpuMeter meter(o.watched);
  meter.start();
  const auto start = Clock::now();
  auto runner = co_await start_runner(bench, *master);
  if (!runner) co_return failed("drain", runner.error());
  runner->expect(backlog);
  auto finished =
      co_await wait_for([&] { return runner->done() >= backlog; }, [&] { return runner->done(); },
                        o.completion_timeout, progress, "done");
  const auto end = runner->last_done();
  meter.stop();
  const auto redis_after = redis_stats(o.redis_url);
  co_await stop_runner(*master, *runner);
  if (!finished) co_return failed("drain", finished.error());
  Outcome out = rate_outcome("drain", o, *runner, backlog, seconds_between(start, end), meter);
  add_redis_per_job(out, "", redis_before, redis_after, backlog);
  co_return out;
}

}  // namespace jq::bench
