// jqbench: jqmaster's load generator, with a built-in no-op worker endpoint.
// flags -> options -> run the scenario -> table and JSON line -> exit code.
// What each scenario measures is in docs/BENCHMARKS.md.
#include <CLI/CLI.hpp>
#include <charconv>
#include <iostream>

#include "cmd/jqbench/scenarios.hpp"

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitBadFlags = 2;

struct Flags {
  std::string scenario = "push";
  std::string url = "http://127.0.0.1:8080";
  std::int64_t jobs = 0;
  double duration_s = 0;
  double warmup_s = 0.5;
  std::string pids;
  std::string worker_listen = "127.0.0.1:0";
  std::string worker_mode = "noop";
  std::string format = "msgpack";
  std::string constraint = "on";
  std::string parts = "throughput,idle,latency";
  double idle_s = 10;
  bool quiet = false;
};

void add_flags(CLI::App& cli, Flags& f, jq::bench::Options& o) {
  // A flag given twice takes its last value: scripts put shared flags first and a run's own
  // after them (bench/compare.sh).
  cli.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cli.add_option("--scenario", f.scenario,
                 "push | e2e | drain | latency | steady | memory | constraints")
      ->capture_default_str();
  cli.add_option("--url", f.url, "the master's base URL")->capture_default_str();
  cli.add_option("--jobs", f.jobs,
                 "jobs in total (push, e2e, drain, latency, memory; constraints: of its "
                 "throughput part, 50000 when not given)")
      ->check(CLI::PositiveNumber);
  cli.add_option("--duration", f.duration_s,
                 "seconds to push for when --jobs is not given (5); constraints: of its latency "
                 "part")
      ->check(CLI::PositiveNumber);
  cli.add_option("--batch", o.batch, "jobs per POST; 1 pushes single jobs")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cli.add_option("--format", f.format, "push bodies (and the answers asked for): msgpack or json")
      ->check(CLI::IsMember({"msgpack", "json"}))
      ->capture_default_str();
  cli.add_option("--connections", o.connections, "keep-alive connections pushing at once")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cli.add_option("--threads", o.threads, "io threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cli.add_flag("--keep-result", o.keep_result,
               "jobs keep their results; e2e fetches every result (GET .../result?wait=30)");
  cli.add_option("--rate", o.rate, "latency, steady: pushes per second, sent on schedule")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cli.add_option("--warmup", f.warmup_s,
                 "latency, steady: seconds sent at the rate but not counted")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cli.add_option("--arg-bytes", o.arg_bytes, "argument size: a string of N bytes; 0 = nil")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  cli.add_option("--priorities", o.priorities, "random priorities 0..N-1; 1 = none sent")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cli.add_option("--window", o.window, "e2e: most jobs pushed but not done; 0 = no limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cli.add_option("--name", o.job_name, "the job name pushed")->capture_default_str();
  cli.add_option("--names", o.job_names,
                 "push, e2e, steady: > 1 spreads the jobs over the names <name>-1..<name>-N, "
                 "drawn at random")
      ->check(CLI::Range(1, 100000));
  cli.add_option("--redis-url", o.redis_url,
                 "the master's Redis: memory reads INFO memory; push, e2e, drain and steady "
                 "report its commands per job (INFO commandstats)");
  cli.add_option("--pids", f.pids,
                 "processes whose CPU time counts, as PID or LABEL=PID, comma-separated "
                 "(jqbench counts itself)");
  cli.add_option("--worker-concurrency", o.worker_concurrency,
                 "concurrency the built-in worker registers with")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cli.add_option("--worker-listen", f.worker_listen, "HOST:PORT of the built-in worker")
      ->capture_default_str();
  cli.add_option("--worker", f.worker_mode,
                 "noop: the built-in worker answers without decoding the job; decode: it decodes "
                 "the job and echoes its argument")
      ->check(CLI::IsMember({"noop", "decode"}))
      ->capture_default_str();
  cli.add_option("--external-worker,--worker-url", o.worker_url,
                 "e2e, drain, steady, constraints throughput: register this worker URL (a process "
                 "of its own, e.g. jqworker) instead of the built-in one; jobs done are read from "
                 "GET /v1/stats");
  cli.add_option(
         "--constraint", f.constraint,
         "constraints: on creates the per-tenant constraint and holds the backlog; off runs "
         "the same pushes without them")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  cli.add_option("--tenants", o.tenants, "constraints: distinct /tenant values")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cli.add_option("--tenant-concurrency", o.tenant_concurrency,
                 "constraints: the constraint's concurrency per tenant")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cli.add_option("--unconstrained-share", o.unconstrained_share,
                 "constraints: share of the throughput jobs named NAME-free, which no constraint "
                 "matches")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cli.add_option("--parts", f.parts, "constraints: any of throughput,idle,latency")
      ->capture_default_str();
  cli.add_option("--backlog", o.backlog,
                 "constraints: jobs held behind one running job during idle and latency (0: only "
                 "that job)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{100000000}))
      ->capture_default_str();
  cli.add_option("--idle-seconds", f.idle_s, "constraints: seconds of the idle CPU sample")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cli.add_option("--label", o.label, "copied into the JSON line");
  cli.add_flag("--quiet", f.quiet, "no progress lines on stderr");
}

jq::Expected<jq::bench::Options, std::string> to_options(const Flags& f, jq::bench::Options o) {
  const auto scenario = jq::bench::parse_scenario(f.scenario);
  if (!scenario) return jq::unexpected("--scenario: unknown scenario \"" + f.scenario + "\"");
  o.scenario = *scenario;
  auto url = jq::api::parse_http_url(f.url);
  if (!url) return jq::unexpected("--url " + url.error());
  o.master = std::move(*url);
  if (f.jobs > 0) o.jobs = f.jobs;
  if (f.duration_s > 0) o.duration = std::chrono::duration<double>(f.duration_s);
  o.warmup = std::chrono::duration<double>(f.warmup_s);
  auto watched = jq::bench::parse_pids(f.pids);
  if (!watched) return jq::unexpected(watched.error());
  o.watched = std::move(*watched);
  const auto colon = f.worker_listen.rfind(':');
  unsigned port = 0;
  const char* port_end = f.worker_listen.data() + f.worker_listen.size();
  if (colon == std::string::npos ||
      std::from_chars(f.worker_listen.data() + colon + 1, port_end, port).ptr != port_end ||
      port > 65535) {
    return jq::unexpected("--worker-listen must be HOST:PORT, got " + f.worker_listen);
  }
  o.worker_host = f.worker_listen.substr(0, colon);
  o.worker_port = static_cast<std::uint16_t>(port);
  if (o.scenario == jq::bench::Scenario::memory && o.redis_url.empty()) {
    return jq::unexpected(std::string("--scenario memory needs --redis-url"));
  }
  o.worker_mode =
      f.worker_mode == "decode" ? jq::bench::WorkerMode::decode : jq::bench::WorkerMode::noop;
  o.constraint = f.constraint == "on";
  o.format = f.format == "json" ? jq::bench::Format::json : jq::bench::Format::msgpack;
  o.idle = std::chrono::duration<double>(f.idle_s);
  auto parts = jq::bench::parse_parts(f.parts);
  if (!parts) return jq::unexpected(parts.error());
  o.parts = *parts;
  if (!o.worker_url.empty()) {
    using jq::bench::Scenario;
    const bool takes_external =
        o.scenario == Scenario::e2e || o.scenario == Scenario::drain ||
        o.scenario == Scenario::steady ||
        (o.scenario == Scenario::constraints && !o.parts.idle && !o.parts.latency);
    if (!takes_external) {
      return jq::unexpected(std::string(
          "--external-worker works with --scenario e2e, drain, steady, and constraints --parts "
          "throughput only (latency and the constraints' idle and latency parts need the "
          "built-in worker: it holds a job and times each one)"));
    }
    if (auto worker = jq::api::parse_http_url(o.worker_url); !worker) {
      return jq::unexpected("--external-worker " + worker.error());
    }
  }
  o.progress = !f.quiet;
  return o;
}

boost::asio::awaitable<jq::bench::Outcome> run_scenario(jq::bench::Bench& bench) {
  using jq::bench::Scenario;
  switch (bench.options().scenario) {
    case Scenario::push:
      return jq::bench::run_push(bench);
    case Scenario::e2e:
      return jq::bench::run_e2e(bench);
    case Scenario::drain:
      return jq::bench::run_drain(bench);
    case Scenario::latency:
      return jq::bench::run_latency(bench);
    case Scenario::memory:
      return jq::bench::run_memory(bench);
    case Scenario::constraints:
      return jq::bench::run_constraints(bench);
    case Scenario::steady:
      return jq::bench::run_steady(bench);
  }
  return jq::bench::run_push(bench);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"jqbench: load generator for jqmaster, with a built-in no-op worker"};
  Flags flags;
  jq::bench::Options defaults;
  add_flags(cli, flags, defaults);
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli.exit(e) == 0 ? 0 : kExitBadFlags;
  }
  auto options = to_options(flags, defaults);
  if (!options) {
    std::cerr << "jqbench: " << options.error() << "\n";
    return kExitBadFlags;
  }
  try {
    jq::bench::Bench bench(std::move(*options));
    return bench.run([&bench]() -> boost::asio::awaitable<int> {
      jq::bench::Outcome outcome = co_await run_scenario(bench);
      if (!bench.options().label.empty()) outcome.fields["label"] = bench.options().label;
      if (!outcome.error.empty()) {
        std::cerr << "jqbench: " << outcome.error << "\n";
        co_return kExitFailed;
      }
      jq::bench::print_table(outcome, std::cout);
      jq::bench::print_json_line(outcome, std::cout);
      co_return 0;
    });
  } catch (const std::exception& e) {
    std::cerr << "jqbench: " << e.what() << "\n";
    return kExitFailed;
  }
}
