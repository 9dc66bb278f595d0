// e2e: pushers and the built-in worker run together; a job is done when the worker has written
// its answer (keep_result=false), or when its pusher has fetched its result (keep_result=true).
// drain: a backlog is pushed first with no worker; then the worker registers and the master
// empties the backlog.
#include <string>

#include "cmd/jqbench/push_load.hpp"
#include "cmd/jqbench/scenarios.hpp"

namespace jq::bench {
namespace {

constexpr std::int64_t kDrainJobs = 50000;
constexpr int kFillBatch = 1000;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The figures e2e and drain share.
Outcome rate_outcome(const char* scenario, const Options& o, std::int64_t jobs, double seconds,
                     const CpuMeter& meter) {
  Outcome out;
  out.fields["scenario"] = scenario;
  out.fields["jobs"] = jobs;
  out.fields["seconds"] = figure(seconds);
  out.fields["jobs_per_s"] = figure(static_cast<double>(jobs) / seconds);
  out.fields["keep_result"] = o.keep_result;
  out.fields["worker_concurrency"] = o.worker_concurrency;
  add_cpu(out, meter, jobs);
  return out;
}

}  // namespace

asio::awaitable<Outcome> run_e2e(Bench& bench) {
  const Options& o = bench.options();
  auto master = bench.connect();
  auto idle = co_await expect_no_jobs(*master);
  if (!idle) co_return failed("e2e", idle.error());
  WorkerEndpoint& worker = bench.worker();
  worker.start();
  const std::int64_t answered_before = worker.answered();
  auto worker_id = co_await register_worker(*master, worker.url(), o.worker_concurrency);
  if (!worker_id) co_return failed("e2e", worker_id.error());

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
  plan.done = [&worker, &load_ptr, answered_before, keep = o.keep_result] {
    return keep ? load_ptr->fetched() : worker.answered() - answered_before;
  };
  PushLoad load(bench, std::move(plan), job_shape(o));
  load_ptr = &load;
  Progress progress(o.progress);
  co_await load.run(progress);
  const std::int64_t pushed = load.acked();
  auto finished = co_await wait_for(
      [&] { return load.errors() > 0 || worker.answered() - answered_before >= pushed; },
      [&] { return worker.answered() - answered_before; }, o.completion_timeout, progress, "done");
  const auto end = o.keep_result ? load.last_fetch() : worker.last_answer();
  meter.stop();
  co_await remove_worker(*master, *worker_id);
  if (load.errors() > 0) co_return failed("e2e", load.first_error());
  if (!finished) co_return failed("e2e", finished.error());

  Outcome out = rate_outcome("e2e", o, pushed, seconds_between(start, end), meter);
  out.fields["batch"] = o.batch;
  out.fields["connections"] = o.connections;
  co_return out;
}

asio::awaitable<Outcome> run_drain(Bench& bench) {
  const Options& o = bench.options();
  auto master = bench.connect();
  auto idle = co_await expect_no_jobs(*master);
  if (!idle) co_return failed("drain", idle.error());

  PushPlan fill;
  fill.batch = kFillBatch;
  fill.connections = o.connections;
  fill.jobs = o.jobs.value_or(kDrainJobs);
  PushLoad load(bench, std::move(fill), job_shape(o));
  Progress progress(o.progress);
  co_await load.run(progress);
  if (load.errors() > 0) co_return failed("drain", load.first_error());
  const std::int64_t backlog = load.acked();

  WorkerEndpoint& worker = bench.worker();
  worker.start();
  const std::int64_t answered_before = worker.answered();
  CpuMeter meter(o.watched);
  meter.start();
  const auto start = Clock::now();
  auto worker_id = co_await register_worker(*master, worker.url(), o.worker_concurrency);
  if (!worker_id) co_return failed("drain", worker_id.error());
  auto finished = co_await wait_for([&] { return worker.answered() - answered_before >= backlog; },
                                    [&] { return worker.answered() - answered_before; },
                                    o.completion_timeout, progress, "done");
  const auto end = worker.last_answer();
  meter.stop();
  co_await remove_worker(*master, *worker_id);
  if (!finished) co_return failed("drain", finished.error());
  co_return rate_outcome("drain", o, backlog, seconds_between(start, end), meter);
}

}  // namespace jq::bench
