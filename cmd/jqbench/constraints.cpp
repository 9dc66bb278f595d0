// constraints: what a keyed concurrency limit costs (docs/BENCHMARKS.md, "Constraints"). With
// --constraint on, in the parts asked for (--parts):
//   throughput  creates jqbench-tenants (name <name>, /tenant exists, key /tenant, concurrency
//               --tenant-concurrency), pushes --jobs jobs whose argument is {tenant: t<k>} with k
//               drawn from --tenants, a share of them (--unconstrained-share) named <name>-free
//               so that nothing matches them, and runs them as e2e does; then deletes it.
//   (backlog)   for idle and latency: creates jqbench-backlog (name <name>-held, key /tenant,
//               concurrency 1), pushes one job of it that the built-in worker holds unanswered,
//               then --backlog more of the same tenant (0: none, the baseline for a backlog),
//               and waits until the constraint holds them all.
//   idle        waits until jqmaster is idle, then samples every watched process's CPU for
//               --idle-seconds while the backlog is held.
//   latency     open-loop pushes of <name>-free jobs at --rate for --duration, as the latency
//               scenario does, while the backlog is held.
//   (release)   deletes jqbench-backlog (which frees the backlog), answers the held job and
//               times the backlog's drain.
// With --constraint off the same pushes run with no constraint and no backlog: the figures to
// compare with.
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "cmd/jqbench/open_loop.hpp"
#include "cmd/jqbench/push_load.hpp"
#include "cmd/jqbench/runner.hpp"
#include "cmd/jqbench/scenarios.hpp"

namespace jq::bench {
namespace {

constexpr const char* kScenario = "constraints";
constexpr const char* kTenantConstraint = "jqbench-tenants";
constexpr const char* kBacklogConstraint = "jqbench-backlog";
constexpr std::int64_t kThroughputJobs = 50000;
constexpr int kBacklogBatch = 1000;
constexpr int kHeldJobTimeoutS = 3600;  // the job that keeps the backlog's key full
constexpr std::chrono::milliseconds kHeldPoll{50};
// A master matches pushes against its snapshot of the constraints, which it reloads after its
// own POST /v1/constraints has answered: pushes wait this long after a constraint is created.
constexpr std::chrono::milliseconds kConstraintSettle{200};
// Idle means a whole window in which jqmaster used less than this share of a core; after
// kMaxSettleWindows windows the sample is taken anyway.
constexpr std::chrono::seconds kSettleWindow{1};
constexpr double kSettledShare = 0.05;
constexpr int kMaxSettleWindows = 30;

using json = nlohmann::json;
using Fields = nlohmann::ordered_json;

std::string free_name(const Options& o) {
  return o.job_name + "-free";
}
std::string held_name(const Options& o) {
  return o.job_name + "-held";
}

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::string tenant_constraint(const Options& o) {
  const json exists = {{"path", "/tenant"}, {"exists", true}};
  return json{{"name", kTenantConstraint},
              {"match", {{"name", o.job_name}, {"argument", json::array({exists})}}},
              {"key", "/tenant"},
              {"concurrency", o.tenant_concurrency}}
      .dump();
}

std::string backlog_constraint(const Options& o) {
  return json{{"name", kBacklogConstraint},
              {"match", {{"name", held_name(o)}}},
              {"key", "/tenant"},
              {"concurrency", 1}}
      .dump();
}

// The constraint's counters as the master's /metrics sums them over the store (holds are
// counted in the shards, starts under {c}): throughput_deferred and throughput_started. Read
// from the master, not from Redis, so the figures do not depend on one release's key layout.
asio::awaitable<void> add_counters(HttpConnection& master, Fields& out, const char* name) {
  const HttpResponse metrics = co_await master.request(Method::get, "metrics");
  if (metrics.status != 200) co_return;
  const std::pair<const char*, const char*> series[] = {
      {"jq_constraint_deferred_total", "throughput_deferred"},
      {"jq_constraint_started_total", "throughput_started"}};
  for (const auto& [metric, field] : series) {
    const std::string line = "\n" + std::string(metric) + "{constraint=\"" + name + "\"} ";
    const auto at = metrics.body.find(line);
    if (at == std::string::npos) continue;
    out[field] = std::llround(std::strtod(metrics.body.c_str() + at + line.size(), nullptr));
  }
}

asio::awaitable<Expected<void, std::string>> throughput(Bench& bench, HttpConnection& master,
                                                        Runner& runner, Outcome& out) {
  const Options& o = bench.options();
  if (o.constraint) {
    auto created = co_await create_constraint(master, tenant_constraint(o));
    if (!created) co_return unexpected(created.error());
    co_await sleep_for(kConstraintSettle);
  }
  JobShape shape = job_shape(o);
  shape.tenants = o.tenants;
  shape.other_share = o.unconstrained_share;
  shape.other_name = free_name(o);
  PushPlan plan;
  plan.batch = o.batch;
  plan.connections = o.connections;
  plan.jobs = o.jobs.value_or(kThroughputJobs);
  plan.window = o.window;
  const std::int64_t done_before = runner.done();
  runner.expect(done_before + *plan.jobs);
  plan.done = [&runner, done_before] { return runner.done() - done_before; };
  CpuMeter meter(o.watched);
  meter.start();
  const auto start = Clock::now();
  PushLoad load(bench, std::move(plan), std::move(shape));
  Progress progress(o.progress);
  co_await load.run(progress);
  const std::int64_t pushed = load.acked();
  auto finished = co_await wait_for(
      [&] { return load.errors() > 0 || runner.done() - done_before >= pushed; },
      [&] { return runner.done() - done_before; }, o.completion_timeout, progress, "done");
  const auto end = runner.last_done();
  meter.stop();
  if (load.errors() > 0) co_return unexpected(load.first_error());
  if (!finished) co_return unexpected(finished.error());
  if (o.constraint) {
    co_await add_counters(master, out.fields, kTenantConstraint);
    auto deleted = co_await delete_constraint(master, kTenantConstraint);
    if (!deleted) co_return unexpected(deleted.error());
  }
  const double seconds = seconds_between(start, end);
  out.fields["throughput_jobs"] = pushed;
  out.fields["throughput_s"] = figure(seconds);
  out.fields["throughput_jobs_per_s"] = figure(static_cast<double>(pushed) / seconds);
  add_cpu(out, meter, pushed, "throughput_");
  co_return Expected<void, std::string>{};
}

// Waits until jqbench-backlog holds `jobs` jobs.
asio::awaitable<Expected<void, std::string>> wait_held(HttpConnection& master, std::int64_t jobs,
                                                       std::chrono::seconds stall,
                                                       Progress& progress) {
  std::int64_t last = -1;
  auto last_change = Clock::now();
  for (;;) {
    const auto counts = co_await constraint_counts(master, kBacklogConstraint);
    if (!counts) co_return unexpected(counts.error());
    if (counts->waiting >= jobs) co_return Expected<void, std::string>{};
    progress.tick("held", counts->waiting);
    if (counts->waiting != last) {
      last = counts->waiting;
      last_change = Clock::now();
    } else if (Clock::now() - last_change > stall) {
      co_return unexpected("the backlog stopped at " + std::to_string(last) + " held jobs of " +
                           std::to_string(jobs));
    }
    co_await sleep_for(kHeldPoll);
  }
}

// One job of <name>-held that the worker keeps unanswered, then the backlog behind it, held.
asio::awaitable<Expected<void, std::string>> hold_backlog(Bench& bench, HttpConnection& master,
                                                          WorkerEndpoint& worker, Outcome& out) {
  const Options& o = bench.options();
  auto created = co_await create_constraint(master, backlog_constraint(o));
  if (!created) co_return unexpected(created.error());
  co_await sleep_for(kConstraintSettle);
  JobShape shape;
  shape.name = held_name(o);
  shape.tenants = 1;  // every job of the key t0
  shape.timeout_s = kHeldJobTimeoutS;
  worker.hold_next(1);
  std::string body;
  JobEncoder(shape, 1).encode(body, 1, false);
  const auto pushed = co_await master.request(Method::post, "v1/jobs", std::move(body));
  if (pushed.status != 201) co_return unexpected("POST /v1/jobs: " + describe(pushed));
  Progress progress(o.progress);
  auto running =
      co_await wait_for([&] { return worker.holding() > 0; }, [&] { return worker.holding(); },
                        o.completion_timeout, progress, "held by the worker");
  if (!running) co_return unexpected(running.error());
  const auto counts = co_await constraint_counts(master, kBacklogConstraint);
  if (!counts) co_return unexpected(counts.error());
  if (counts->running != 1) {
    co_return unexpected("the held job runs outside " + std::string(kBacklogConstraint) +
                         " (it counts " + std::to_string(counts->running) +
                         " running): the master did not match it yet");
  }

  const auto start = Clock::now();
  PushPlan fill;
  fill.batch = kBacklogBatch;
  fill.connections = o.connections;
  fill.jobs = o.backlog;
  PushLoad load(bench, std::move(fill), shape);
  co_await load.run(progress);
  if (load.errors() > 0) co_return unexpected(load.first_error());
  const auto all_pushed = Clock::now();
  auto held = co_await wait_held(master, o.backlog, o.completion_timeout, progress);
  if (!held) co_return unexpected(held.error());
  out.fields["backlog_jobs"] = o.backlog;
  out.fields["backlog_push_s"] = figure(seconds_between(start, all_pushed));
  out.fields["backlog_held_s"] = figure(seconds_between(start, Clock::now()));
  co_return Expected<void, std::string>{};
}

// CPU of `meter`'s processes as a share of one core over `seconds`, in percent.
Fields cpu_percent(const CpuMeter& meter, double seconds) {
  Fields by_process = Fields::object();
  for (const auto& share : meter.shares()) {
    by_process[share.label] = figure(100.0 * share.seconds / seconds);
  }
  return by_process;
}

// The process the idle part waits for: jqmaster when --pids names it.
std::vector<WatchedProcess> master_process(const Options& o) {
  for (const auto& w : o.watched) {
    if (w.label == "jqmaster") return {w};
  }
  return {};
}

asio::awaitable<void> idle(const Options& o, Outcome& out) {
  const auto settle_start = Clock::now();
  const auto master = master_process(o);
  for (int window = 0; window < kMaxSettleWindows; ++window) {
    CpuMeter meter(master);
    meter.start();
    co_await sleep_for(kSettleWindow);
    meter.stop();
    if (master.empty() ||
        meter.shares().front().seconds <
            kSettledShare * std::chrono::duration<double>(kSettleWindow).count()) {
      break;
    }
  }
  out.fields["idle_settle_s"] = figure(seconds_between(settle_start, Clock::now()));
  CpuMeter meter(o.watched);
  meter.start();
  const auto start = Clock::now();
  co_await sleep_for(std::chrono::duration_cast<Clock::duration>(o.idle));
  meter.stop();
  const double seconds = seconds_between(start, Clock::now());
  out.fields["idle_s"] = figure(seconds);
  out.fields["idle_cpu_pct_by_process"] = cpu_percent(meter, seconds);
}

asio::awaitable<Expected<void, std::string>> latency(Bench& bench, WorkerEndpoint& worker,
                                                     Outcome& out) {
  const Options& o = bench.options();
  OpenLoopPlan plan;
  plan.shape = job_shape(o);
  plan.shape.name = free_name(o);
  plan.shape.tenants = o.tenants;
  plan.rate = o.rate;
  plan.warmup_jobs = static_cast<std::int64_t>(std::llround(o.rate * o.warmup.count()));
  plan.measured_jobs = static_cast<std::int64_t>(std::llround(o.rate * o.duration.count()));
  CpuMeter meter(o.watched);
  const auto redis_before = redis_stats(o.redis_url);
  auto figures = co_await run_open_loop(bench, &worker, plan, meter);
  if (!figures) co_return unexpected(figures.error());
  out.fields["latency_rate_offered_per_s"] = figure(o.rate);
  add_open_loop(out, *figures, "latency_");
  add_cpu(out, meter, figures->jobs, "latency_");
  // The warm-up counts too: the command counts cannot tell its jobs apart.
  add_redis_per_job(out, "latency_", redis_before, redis_stats(o.redis_url),
                    plan.warmup_jobs + plan.measured_jobs);
  co_return Expected<void, std::string>{};
}

// Deletes jqbench-backlog, which frees the backlog, answers the held job, and waits until the
// worker has answered them all.
asio::awaitable<Expected<void, std::string>> release(Bench& bench, HttpConnection& master,
                                                     WorkerEndpoint& worker, Outcome& out) {
  const Options& o = bench.options();
  const std::int64_t answered_before = worker.answered();
  const std::int64_t jobs = o.backlog + 1;
  const auto start = Clock::now();
  auto deleted = co_await delete_constraint(master, kBacklogConstraint);
  const auto deleted_at = Clock::now();
  worker.release_held();
  if (!deleted) co_return unexpected(deleted.error());
  Progress progress(o.progress);
  auto finished = co_await wait_for([&] { return worker.answered() - answered_before >= jobs; },
                                    [&] { return worker.answered() - answered_before; },
                                    o.completion_timeout, progress, "done");
  if (!finished) co_return unexpected(finished.error());
  const double seconds = seconds_between(start, worker.last_answer());
  out.fields["release_delete_s"] = figure(seconds_between(start, deleted_at));
  out.fields["release_s"] = figure(seconds);
  out.fields["release_jobs_per_s"] = figure(static_cast<double>(jobs) / seconds);
  co_return Expected<void, std::string>{};
}

// The parts after throughput, on the built-in worker.
asio::awaitable<Expected<void, std::string>> held_parts(Bench& bench, HttpConnection& master,
                                                        WorkerEndpoint& worker, Outcome& out) {
  const Options& o = bench.options();
  if (o.constraint) {
    auto held = co_await hold_backlog(bench, master, worker, out);
    if (!held) co_return unexpected(held.error());
  }
  if (o.parts.idle) co_await idle(o, out);
  if (o.parts.latency) {
    auto timed = co_await latency(bench, worker, out);
    if (!timed) co_return unexpected(timed.error());
  }
  if (!o.constraint) co_return Expected<void, std::string>{};
  auto released = co_await release(bench, master, worker, out);
  co_return released;
}

asio::awaitable<Expected<void, std::string>> run_parts(Bench& bench, HttpConnection& master,
                                                       Runner& runner, Outcome& out) {
  const Options& o = bench.options();
  if (o.parts.throughput) {
    auto done = co_await throughput(bench, master, runner, out);
    if (!done) co_return unexpected(done.error());
  }
  if (runner.endpoint == nullptr || (!o.parts.idle && !o.parts.latency)) {
    co_return Expected<void, std::string>{};
  }
  auto held = co_await held_parts(bench, master, *runner.endpoint, out);
  co_return held;
}

// Leaves the master as the scenario found it, whatever failed.
asio::awaitable<void> clean_up(HttpConnection& master, Runner& runner) {
  if (runner.endpoint) runner.endpoint->release_held();
  co_await delete_constraint(master, kTenantConstraint);
  co_await delete_constraint(master, kBacklogConstraint);
  co_await stop_runner(master, runner);
}

}  // namespace

asio::awaitable<Outcome> run_constraints(Bench& bench) {
  const Options& o = bench.options();
  auto master = bench.connect();
  auto idle_master = co_await expect_no_jobs(*master);
  if (!idle_master) co_return failed(kScenario, idle_master.error());
  auto runner = co_await start_runner(bench, *master);
  if (!runner) co_return failed(kScenario, runner.error());

  Outcome out;
  out.fields["scenario"] = kScenario;
  out.fields["constraint"] = o.constraint ? "on" : "off";
  add_runner(out, *runner, o);
  out.fields["tenants"] = o.tenants;
  out.fields["tenant_concurrency"] = o.tenant_concurrency;
  out.fields["unconstrained_share"] = o.unconstrained_share;
  out.fields["batch"] = o.batch;
  out.fields["connections"] = o.connections;
  auto ran = co_await run_parts(bench, *master, *runner, out);
  if (runner->endpoint && runner->endpoint->malformed() > 0) {
    ran = unexpected("the worker could not decode " +
                     std::to_string(runner->endpoint->malformed()) + " job requests");
  }
  co_await clean_up(*master, *runner);
  if (!ran) co_return failed(kScenario, ran.error());
  co_return out;
}

}  // namespace jq::bench
