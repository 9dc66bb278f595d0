// jqbench (and bench/wrk_push.py), the real programs, against the real daemon and Redis: every
// scenario runs, exits 0 and prints a JSON line that reports its jobs. A smoke test only: CI
// machines are shared and noisy, so no figure is checked beyond being present and sane.
#include <catch2/catch.hpp>

#include <sstream>

#include "tests/support/daemon.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/worker.hpp"

using jq::test::Daemon;
using jq::test::DaemonOptions;
using jq::test::ProgramResult;
using jq::test::RedisServer;
using jq::test::run_program;
using jq::test::Worker;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

struct Fixture {
  RedisServer redis;
  Daemon daemon{DaemonOptions{redis.url(), 4}};

  std::string url() const { return "http://127.0.0.1:" + std::to_string(daemon.port()); }
  std::string pids() const {
    return "redis=" + std::to_string(redis.pid()) + ",jqmaster=" + std::to_string(daemon.pid());
  }

  // jqbench with `args` after --url and --quiet.
  ProgramResult bench(std::vector<std::string> args) const {
    args.insert(args.begin(), {JQ_BENCH_BINARY, "--url", url(), "--quiet"});
    return run_program(args, {}, "", 90s);
  }
};

// The one JSON line of a run (the table's lines do not start with '{').
json json_line(const ProgramResult& r) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  std::istringstream lines(r.out);
  std::string line;
  std::vector<json> found;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.front() == '{') found.push_back(json::parse(line));
  }
  REQUIRE(found.size() == 1);
  return found.front();
}

}  // namespace

TEST_CASE("jqbench e2e runs 200 jobs through the master and its built-in worker", "[http]") {
  Fixture f;
  const json line = json_line(f.bench({"--scenario", "e2e", "--jobs", "200", "--pids", f.pids()}));
  CHECK(line["scenario"] == "e2e");
  CHECK(line["jobs"] == 200);
  CHECK(line["jobs_per_s"].is_number());
  CHECK(line["cpu_us_per_job"].is_number());
  CHECK(line["cpu_s_by_process"].contains("jqmaster"));
  // The worker registered for the run and removed itself afterwards.
  CHECK(f.daemon.http().get("/v1/workers").value().empty());
  CHECK(f.daemon.http().get("/v1/stats").value()["succeeded"] == 200);
}

TEST_CASE("jqbench e2e with keep_result fetches every result", "[http]") {
  Fixture f;
  const json line =
      json_line(f.bench({"--scenario", "e2e", "--jobs", "100", "--batch", "10", "--keep-result"}));
  CHECK(line["jobs"] == 100);
  CHECK(line["keep_result"] == true);
}

TEST_CASE("jqbench push sends 500 jobs in batches of 50", "[http]") {
  Fixture f;
  const json line = json_line(f.bench({"--scenario", "push", "--jobs", "500", "--batch", "50"}));
  CHECK(line["scenario"] == "push");
  CHECK(line["jobs"] == 500);
  CHECK(line["jobs_per_s"].is_number());
  CHECK(line["ack_p99_ms"].is_number());
  CHECK(f.daemon.http().get("/v1/stats").value()["ready"] == 500);
}

TEST_CASE("jqbench drain, latency and memory run and report their jobs", "[http]") {
  {
    Fixture f;
    const json line = json_line(f.bench({"--scenario", "drain", "--jobs", "300"}));
    CHECK(line["scenario"] == "drain");
    CHECK(line["jobs"] == 300);
  }
  {
    Fixture f;
    const json line = json_line(
        f.bench({"--scenario", "latency", "--rate", "400", "--jobs", "200", "--warmup", "0.1"}));
    CHECK(line["scenario"] == "latency");
    CHECK(line["jobs"] == 200);
    CHECK(line["done_p99_ms"].is_number());
  }
  {
    Fixture f;
    const json line = json_line(f.bench({"--scenario", "memory", "--jobs", "1000", "--batch", "100",
                                         "--redis-url", f.redis.url()}));
    CHECK(line["scenario"] == "memory");
    CHECK(line["jobs"] == 1000);
    CHECK(line["bytes_per_job"].is_number());
  }
}

TEST_CASE("jqbench refuses to count jobs it did not push", "[http]") {
  Fixture f;
  REQUIRE(json_line(f.bench({"--scenario", "push", "--jobs", "10"}))["jobs"] == 10);
  const ProgramResult r = f.bench({"--scenario", "e2e", "--jobs", "10"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("already holds 10") != std::string::npos);
}

TEST_CASE("jqbench constraints holds a backlog behind a running job and reports every part",
          "[http]") {
  Fixture f;
  // 10 tenants of 2 slots against a worker of 50: most jobs wait for their tenant at least once.
  const json line = json_line(f.bench({"--scenario",
                                       "constraints",
                                       "--worker",
                                       "decode",
                                       "--jobs",
                                       "300",
                                       "--batch",
                                       "10",
                                       "--tenants",
                                       "10",
                                       "--unconstrained-share",
                                       "0",
                                       "--backlog",
                                       "200",
                                       "--idle-seconds",
                                       "0.2",
                                       "--rate",
                                       "400",
                                       "--duration",
                                       "0.25",
                                       "--warmup",
                                       "0.05",
                                       "--pids",
                                       f.pids(),
                                       "--redis-url",
                                       f.redis.url()}));
  CHECK(line["scenario"] == "constraints");
  CHECK(line["constraint"] == "on");
  CHECK(line["worker"] == "decode");
  CHECK(line["throughput_jobs"] == 300);
  CHECK(line["throughput_jobs_per_s"].get<double>() > 0);
  CHECK(line["throughput_cpu_s_by_process"].contains("jqmaster"));
  // Every job went through the constraint.
  CHECK(line["throughput_started"] == 300);
  CHECK(line["backlog_jobs"] == 200);
  CHECK(line["backlog_held_s"].get<double>() > 0);
  CHECK(line["idle_s"].get<double>() >= 0.2);
  CHECK(line["idle_cpu_pct_by_process"]["jqmaster"].get<double>() >= 0);
  CHECK(line["idle_cpu_pct_by_process"]["jqmaster"].get<double>() <= 200);
  CHECK(line["latency_jobs"] == 100);
  CHECK(line["latency_to_worker_p99_ms"].get<double>() > 0);
  CHECK(line["latency_to_worker_p99_ms"] <= line["latency_done_p99_ms"]);
  // push, reserve and complete: about three scripts a job
  CHECK(line["latency_redis_by_command"]["fcall"][0].get<double>() >= 1);
  CHECK(line["release_s"].get<double>() > 0);
  // The constraints, the backlog and the worker are gone: throughput, the held job and its
  // backlog, and the latency jobs with their warm-up all succeeded.
  CHECK(f.daemon.http().get("/v1/constraints").value().empty());
  CHECK(f.daemon.http().get("/v1/workers").value().empty());
  const json stats = f.daemon.http().get("/v1/stats").value();
  CHECK(stats["succeeded"] == 300 + 1 + 200 + 120);
  CHECK(stats["ready"] == 0);
  CHECK(stats["running"] == 0);
}

TEST_CASE("jqbench constraints off runs the same pushes with no constraint and no backlog",
          "[http]") {
  Fixture f;
  const json line = json_line(f.bench(
      {"--scenario", "constraints", "--constraint", "off", "--parts", "throughput,latency",
       "--jobs", "200", "--batch", "20", "--rate", "400", "--duration", "0.1", "--warmup", "0"}));
  CHECK(line["constraint"] == "off");
  CHECK(line["worker"] == "noop");
  CHECK(line["throughput_jobs"] == 200);
  CHECK(line["latency_jobs"] == 40);
  CHECK_FALSE(line.contains("backlog_jobs"));
  CHECK_FALSE(line.contains("idle_s"));
  CHECK(f.daemon.http().get("/v1/stats").value()["succeeded"] == 240);
}

TEST_CASE("jqbench constraints runs its throughput on an external worker", "[http]") {
  Fixture f;
  Worker worker;
  const json line =
      json_line(f.bench({"--scenario", "constraints", "--parts", "throughput", "--worker-url",
                         worker.url(), "--jobs", "200", "--batch", "20"}));
  CHECK(line["worker"] == "external");
  CHECK(line["throughput_jobs"] == 200);
  CHECK(line["throughput_jobs_per_s"].get<double>() > 0);
  CHECK(worker.stats()["received"] == 200);
  CHECK(f.daemon.http().get("/v1/workers").value().empty());
}

TEST_CASE("jqbench constraints refuses an external worker for the parts that need its own",
          "[http]") {
  Fixture f;
  const ProgramResult r =
      f.bench({"--scenario", "constraints", "--worker-url", "http://127.0.0.1:9/"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--parts throughput only") != std::string::npos);
}

TEST_CASE("jqbench pushes single jobs as JSON and reads the JSON answers", "[http]") {
  Fixture f;
  const json line = json_line(f.bench({"--scenario", "push", "--format", "json", "--jobs", "300",
                                       "--connections", "20", "--priorities", "10", "--keep-result",
                                       "--arg-bytes", "4", "--redis-url", f.redis.url()}));
  CHECK(line["jobs"] == 300);
  CHECK(line["format"] == "json");
  CHECK(line["connections"] == 20);
  CHECK(line["redis_by_command"]["fcall"][0].get<double>() > 0);
  const json stats = f.daemon.http().get("/v1/stats").value();
  CHECK(stats["ready"] == 300);
  // What JSON carried arrived: a queued job has its argument and keeps its result.
  const json page = f.daemon.http().get("/v1/jobs?limit=1").value();
  REQUIRE(page["jobs"].size() == 1);
  CHECK(page["jobs"][0]["argument"] == "xxxx");
  CHECK(page["jobs"][0]["keep_result"] == true);
}

TEST_CASE("jqbench e2e and drain run on an external worker and count what the master stored",
          "[http]") {
  {
    Fixture f;
    Worker worker({"--answer", "json"});
    const json line =
        json_line(f.bench({"--scenario", "e2e", "--format", "json", "--batch", "1", "--jobs", "200",
                           "--external-worker", worker.url(), "--pids",
                           f.pids() + ",worker=" + std::to_string(worker.pid())}));
    CHECK(line["worker"] == "external");
    CHECK(line["jobs"] == 200);
    CHECK(line["cpu_s_by_process"].contains("worker"));
    CHECK(worker.stats()["received"] == 200);
    CHECK(f.daemon.http().get("/v1/stats").value()["succeeded"] == 200);
    CHECK(f.daemon.http().get("/v1/workers").value().empty());
  }
  {
    Fixture f;
    Worker worker;
    const json line =
        json_line(f.bench({"--scenario", "drain", "--jobs", "300", "--worker-concurrency", "200",
                           "--external-worker", worker.url()}));
    CHECK(line["worker"] == "external");
    CHECK(line["worker_concurrency"] == 200);
    CHECK(line["jobs"] == 300);
    CHECK(worker.stats()["received"] == 300);
  }
}

TEST_CASE("jqbench steady long-polls every result, with the built-in or an external worker",
          "[http]") {
  {
    Fixture f;
    const json line = json_line(f.bench({"--scenario", "steady", "--rate", "400", "--jobs", "100",
                                         "--warmup", "0.05", "--redis-url", f.redis.url()}));
    CHECK(line["scenario"] == "steady");
    CHECK(line["jobs"] == 100);
    CHECK(line["worker"] == "noop");
    CHECK(line["result_p50_ms"].get<double>() > 0);
    CHECK(line["result_p99_ms"] >= line["result_p50_ms"]);
    CHECK(line["result_p50_ms"] >= line["ack_p50_ms"]);
    CHECK(line["done_p99_ms"].is_number());
    CHECK(line["redis_by_command"]["fcall"][0].get<double>() >= 1);
    // Every result was fetched, so none is kept.
    const json stats = f.daemon.http().get("/v1/stats").value();
    CHECK(stats["succeeded"] == 120);
  }
  {
    Fixture f;
    Worker worker({"--answer", "json", "--no-stats"});
    const json line =
        json_line(f.bench({"--scenario", "steady", "--format", "json", "--rate", "400", "--jobs",
                           "100", "--warmup", "0", "--external-worker", worker.url()}));
    CHECK(line["worker"] == "external");
    CHECK(line["format"] == "json");
    CHECK(line["jobs"] == 100);
    CHECK(line["result_p99_ms"].get<double>() > 0);
    CHECK_FALSE(line.contains("done_p99_ms"));
  }
}

TEST_CASE("bench/wrk_push.py sends single JSON pushes the master stores, and reports them",
          "[http]") {
  Fixture f;
  const ProgramResult r = run_program({"python3", JQ_WRK_PUSH, "--url", f.url(), "--pids", f.pids(),
                                       "--duration", "1", "--connections", "4"},
                                      {}, "", 60s);
  const json line = json_line(r);
  CHECK(line["generator"] == "wrk");
  const std::int64_t jobs = line["jobs"];
  CHECK(jobs > 0);
  CHECK(line["cpu_s_by_process"].contains("wrk"));
  CHECK(line["cpu_s_by_process"].contains("jqmaster"));
  // Every push wrk counted was answered 201 and stored; a few more may have been in flight.
  const json stats = f.daemon.http().get("/v1/stats").value();
  CHECK(stats["ready"].get<std::int64_t>() >= jobs);
  CHECK(stats["ready"].get<std::int64_t>() <= jobs + 4);
}

TEST_CASE("bench/wrk_push.py with a worker times row b until the worker ran every job", "[http]") {
  Fixture f;
  Worker worker({"--answer", "json", "--no-stats"});
  const ProgramResult r = run_program(
      {"python3", JQ_WRK_PUSH, "--url", f.url(), "--pids",
       f.pids() + ",worker=" + std::to_string(worker.pid()), "--duration", "1", "--connections",
       "4", "--external-worker", worker.url(), "--worker-concurrency", "8"},
      {}, "", 60s);
  const json line = json_line(r);
  CHECK(line["scenario"] == "e2e");
  CHECK(line["worker"] == "external");
  const std::int64_t jobs = line["jobs"];
  CHECK(jobs > 0);
  CHECK(line["cpu_s_by_process"].contains("worker"));
  // It waited for every job wrk counted to succeed, then removed the worker's registration.
  const json stats = f.daemon.http().get("/v1/stats").value();
  CHECK(stats["succeeded"].get<std::int64_t>() >= jobs);
  CHECK(stats["workers"] == 0);
}
