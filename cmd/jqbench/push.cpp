// push: how many jobs a second the master acknowledges (201), single jobs or batches, with no
// worker registered. memory: Redis bytes per queued job, from INFO memory before and after.
#include <string>

#include "cmd/jqbench/push_load.hpp"
#include "cmd/jqbench/scenarios.hpp"

namespace jq::bench {
namespace {

constexpr std::int64_t kMemoryJobs = 100000;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

JobShape job_shape(const Options& o) {
  JobShape shape;
  shape.name = o.job_name;
  shape.names = o.job_names;
  shape.arg_bytes = o.arg_bytes;
  shape.priorities = o.priorities;
  shape.keep_result = o.keep_result;
  shape.format = o.format;
  return shape;
}

asio::awaitable<Outcome> run_push(Bench& bench) {
  const Options& o = bench.options();
  PushPlan plan;
  plan.batch = o.batch;
  plan.connections = o.connections;
  plan.jobs = o.jobs;
  const auto redis_before = redis_stats(o.redis_url);
  CpuMeter meter(o.watched);
  meter.start();
  const auto start = Clock::now();
  if (!o.jobs) {
    plan.until = start + std::chrono::duration_cast<Clock::duration>(o.duration);
  }
  PushLoad load(bench, std::move(plan), job_shape(o));
  Progress progress(o.progress);
  co_await load.run(progress);
  const double seconds = seconds_between(start, Clock::now());
  meter.stop();
  const auto redis_after = redis_stats(o.redis_url);
  if (load.errors() > 0) co_return failed("push", load.first_error());

  Outcome out;
  out.fields["scenario"] = "push";
  out.fields["jobs"] = load.acked();
  out.fields["seconds"] = figure(seconds);
  out.fields["jobs_per_s"] = figure(static_cast<double>(load.acked()) / seconds);
  out.fields["requests_per_s"] = figure(static_cast<double>(load.requests()) / seconds);
  out.fields["batch"] = o.batch;
  out.fields["connections"] = o.connections;
  out.fields["format"] = format_name(o.format);
  add_percentiles(out, "ack", percentiles(load.take_ack_samples()));
  add_cpu(out, meter, load.acked());
  add_redis_per_job(out, "", redis_before, redis_after, load.acked());
  co_return out;
}

asio::awaitable<Outcome> run_memory(Bench& bench) {
  const Options& o = bench.options();
  auto master = bench.connect();
  auto idle = co_await expect_no_jobs(*master);
  if (!idle) co_return failed("memory", idle.error());
  const auto before = redis_used_memory(o.redis_url);
  if (!before) co_return failed("memory", before.error());

  PushPlan plan;
  plan.batch = o.batch;
  plan.connections = o.connections;
  plan.jobs = o.jobs.value_or(kMemoryJobs);
  PushLoad load(bench, std::move(plan), job_shape(o));
  Progress progress(o.progress);
  co_await load.run(progress);
  if (load.errors() > 0) co_return failed("memory", load.first_error());
  const auto after = redis_used_memory(o.redis_url);
  if (!after) co_return failed("memory", after.error());

  const std::int64_t jobs = load.acked();
  Outcome out;
  out.fields["scenario"] = "memory";
  out.fields["jobs"] = jobs;
  out.fields["arg_bytes"] = o.arg_bytes;
  out.fields["used_memory_before"] = *before;
  out.fields["used_memory_after"] = *after;
  out.fields["bytes_per_job"] = figure(static_cast<double>(*after - *before) /
                                       static_cast<double>(std::max<std::int64_t>(jobs, 1)));
  co_return out;
}

}  // namespace jq::bench
