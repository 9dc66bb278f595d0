// GET /metrics against the real daemon, a real Redis and a real jqworker. Every scrape is read
// by a real parser (Debian's python3-prometheus-client), so a malformed line fails the test, and
// the values are checked as jobs flow.
#include <catch2/catch.hpp>

#include <fstream>
#include <optional>

#include "tests/support/daemon.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/worker.hpp"

using namespace std::chrono_literals;
using jq::test::Daemon;
using jq::test::DaemonOptions;
using jq::test::Headers;
using jq::test::HttpClient;
using jq::test::RedisServer;
using jq::test::TempDir;
using jq::test::wait_until;
using jq::test::Worker;
using nlohmann::json;

namespace {

// Fast retries so a failing job dies quickly.
const std::string kFastRetry = "retry:\n  base: 0.05\n  max: 0.2\n  jitter: 0\n";

// Prints {"types": {family: type}, "samples": [[name, {label: value}, value], ...]} for the
// exposition in the file named by argv[1]; a parse error exits non-zero with a traceback.
const std::string kParser = R"(import json, sys
from prometheus_client.parser import text_string_to_metric_families
with open(sys.argv[1]) as f:
    text = f.read()
out = {"types": {}, "samples": []}
for family in text_string_to_metric_families(text):
    out["types"][family.name] = family.type
    for s in family.samples:
        out["samples"].append([s.name, s.labels, s.value])
print(json.dumps(out))
)";

// A scrape as the parser read it.
class Scrape {
 public:
  explicit Scrape(json parsed) : parsed_(std::move(parsed)) {}

  // The value of the sample with exactly these labels; nullopt when there is none.
  std::optional<double> value(const std::string& name, const json& labels = json::object()) const {
    for (const auto& s : parsed_["samples"]) {
      if (s[0] == name && s[1] == labels) return s[2].get<double>();
    }
    return std::nullopt;
  }
  // Every value `label` takes in samples of `name`.
  std::vector<std::string> label_values(const std::string& name, const std::string& label) const {
    std::vector<std::string> values;
    for (const auto& s : parsed_["samples"]) {
      if (s[0] == name && s[1].contains(label)) values.push_back(s[1][label]);
    }
    return values;
  }
  std::string type(const std::string& family) const {
    return parsed_["types"].value(family, std::string("(none)"));
  }

 private:
  json parsed_;
};

Scrape parse(const std::string& exposition) {
  TempDir dir;
  const std::string path = dir.file("metrics.txt");
  std::ofstream(path) << exposition;
  auto run = jq::test::run_program({"/usr/bin/python3", "-c", kParser, path});
  INFO(run.err);
  INFO(exposition);
  REQUIRE(run.exit_code == 0);
  return Scrape(json::parse(run.out));
}

Scrape scrape(const HttpClient& http) {
  auto res = http.get("/metrics");
  REQUIRE(res.status == 200);
  CHECK(res.header("content-type").starts_with("text/plain; version=0.0.4"));
  return parse(res.body);
}

std::string push(const HttpClient& http, const json& job) {
  auto res = http.post("/v1/jobs", job);
  REQUIRE(res.status == 201);
  return res.value()["id"];
}

void register_worker(const HttpClient& http, const std::string& url, const json& names) {
  auto res = http.post("/v1/workers", {{"url", url}, {"names", names}, {"concurrency", 4}});
  REQUIRE(res.status == 201);
}

json named(const std::string& name) {
  return {{"name", name}};
}

// A push is matched against the master's own snapshot of the constraints, which it reloads just
// after a change: wait until the snapshot holds `n`, so that no push races the reload.
void wait_for_constraints(const Daemon& daemon, int n) {
  const std::string loaded = "constraints: " + std::to_string(n) + " loaded";
  REQUIRE(daemon.logged(loaded, 10s));
}

}  // namespace

TEST_CASE("metrics count pushes, attempts and their outcomes by job name as jobs flow", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, kFastRetry});
  auto http = daemon.http();
  const json batch = json::array({named("m.ok"), named("m.ok"), named("m.ok")});
  REQUIRE(http.post("/v1/jobs", batch).status == 201);
  push(http, {{"name", "m.fail"}, {"argument", {{"fail", true}}}, {"max_retry", 1}});

  // No worker yet: the jobs wait in their queues.
  const Scrape before = scrape(http);
  CHECK(before.value("jq_jobs_pushed_total", named("m.ok")) == 3);
  CHECK(before.value("jq_jobs_pushed_total", named("m.fail")) == 1);
  CHECK(before.value("jq_jobs_dispatched_total", named("m.ok")) == 0);
  CHECK(before.value("jq_queue_ready", named("m.ok")) == 3);
  CHECK(before.value("jq_queue_ready", named("m.fail")) == 1);
  CHECK(before.value("jq_queue_running", named("m.ok")) == 0);
  CHECK(before.value("jq_queue_lag_seconds", named("m.ok")) >= 0);
  CHECK(before.value("jq_push_duration_seconds_count") == 2);
  CHECK(before.value("jq_redis_command_duration_seconds_count") > 0);

  Worker worker;
  register_worker(http, worker.url(), {"m.ok", "m.fail"});
  REQUIRE(wait_until(
      [&] {
        const Scrape s = scrape(http);
        return s.value("jq_jobs_succeeded_total", named("m.ok")) == 3 &&
               s.value("jq_jobs_dead_total", named("m.fail")) == 1 &&
               s.value("jq_worker_inflight", {{"worker", worker.url()}}) == 0;
      },
      20s));

  const Scrape after = scrape(http);
  CHECK(after.value("jq_jobs_dispatched_total", named("m.ok")) == 3);
  CHECK(after.value("jq_jobs_failed_total", named("m.ok")) == 0);
  CHECK(after.value("jq_jobs_dispatched_total", named("m.fail")) == 2);
  CHECK(after.value("jq_jobs_failed_total", named("m.fail")) == 2);
  CHECK(after.value("jq_jobs_retried_total", named("m.fail")) == 1);
  CHECK(after.value("jq_jobs_succeeded_total", named("m.fail")) == 0);
  CHECK(after.value("jq_queue_ready", named("m.ok")) == 0);
  CHECK(after.value("jq_queue_dead", named("m.fail")) == 1);
  CHECK(after.value("jq_queue_scheduled", named("m.fail")) == 0);
  CHECK(after.value("jq_job_latency_seconds_count") == 4);  // 3 successes and 1 death
  CHECK(after.value("jq_job_latency_seconds_bucket", {{"le", "+Inf"}}) == 4);
  const json on_worker = {{"worker", worker.url()}};
  CHECK(after.value("jq_dispatch_duration_seconds_count", on_worker) == 5);
  CHECK(after.value("jq_dispatch_duration_seconds_sum", on_worker) > 0);
  CHECK(after.value("jq_worker_inflight", on_worker) == 0);
  CHECK(after.value("jq_worker_healthy", on_worker) == 1);

  CHECK(after.type("jq_jobs_pushed") == "counter");  // the parser drops a counter's _total
  CHECK(after.type("jq_queue_ready") == "gauge");
  CHECK(after.type("jq_dispatch_duration_seconds") == "histogram");
  CHECK(after.type("jq_redis_command_duration_seconds") == "histogram");
}

TEST_CASE("HTTP requests are counted by route pattern, never by raw path", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  const std::string id = push(http, named("r.one"));
  REQUIRE(http.get("/v1/jobs/" + id).status == 200);
  REQUIRE(http.get("/v1/jobs/" + id).status == 200);
  REQUIRE(http.get("/v1/jobs/0-nosuchjob").status == 404);
  REQUIRE(http.get("/no/such/path/" + id).status == 404);
  REQUIRE(http.request("PUT", "/v1/jobs", "", {}).status == 405);

  const Scrape s = scrape(http);
  auto requests = [&s](const std::string& route, const std::string& method, int status) {
    return s.value("jq_http_requests_total",
                   {{"route", route}, {"method", method}, {"status", std::to_string(status)}});
  };
  CHECK(requests("/v1/jobs", "POST", 201) == 1);
  CHECK(requests("/v1/jobs/{id}", "GET", 200) == 2);
  CHECK(requests("/v1/jobs/{id}", "GET", 404) == 1);
  CHECK(requests("unmatched", "GET", 404) == 1);
  CHECK(requests("/v1/jobs", "PUT", 405) == 1);
  for (const std::string& route : s.label_values("jq_http_requests_total", "route")) {
    INFO(route);
    CHECK(route.find(id) == std::string::npos);
    CHECK(route.find("nosuch") == std::string::npos);
    CHECK(route.find("/no/such") == std::string::npos);
  }
}

TEST_CASE("with auth on, /metrics answers without a token", "[http]") {
  RedisServer redis;
  const std::string auth =
      "auth:\n  tokens:\n    - {token: metrics-admin-0123456789, role: admin}\n";
  Daemon daemon({redis.url(), 4, auth});
  auto http = daemon.http();
  REQUIRE(http.get("/v1/stats").status == 401);
  const Headers bogus = {{"Authorization", "Bearer not-a-configured-token"}};
  CHECK(http.request("GET", "/metrics", "", bogus).status == 200);
  const Scrape s = scrape(http);
  CHECK(s.value("jq_http_requests_total",
                {{"route", "/v1/stats"}, {"method", "GET"}, {"status", "401"}}) == 1);
}

TEST_CASE("job names past metrics.max_job_names are counted as _other", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, "metrics:\n  max_job_names: 2\n"});
  auto http = daemon.http();
  for (const char* name : {"cap.a", "cap.b", "cap.c", "cap.d", "cap.d"}) push(http, named(name));

  const Scrape s = scrape(http);
  CHECK(s.value("jq_jobs_pushed_total", named("cap.a")) == 1);
  CHECK(s.value("jq_jobs_pushed_total", named("cap.b")) == 1);
  CHECK(s.value("jq_jobs_pushed_total", named("_other")) == 3);
  CHECK(s.value("jq_queue_ready", named("cap.a")) == 1);
  CHECK(s.value("jq_queue_ready", named("cap.b")) == 1);
  for (const char* family : {"jq_jobs_pushed_total", "jq_jobs_succeeded_total", "jq_queue_ready",
                             "jq_queue_lag_seconds"}) {
    for (const std::string& name : s.label_values(family, "name")) {
      INFO(family << " " << name);
      CHECK((name == "cap.a" || name == "cap.b" || name == "_other"));
    }
  }
}

TEST_CASE("with Redis down, /metrics still answers, without the series read from Redis", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  push(http, named("down.q"));
  REQUIRE(http.post("/v1/constraints", {{"name", "down.c"}, {"match", named("*")}}).status == 201);
  const Scrape up = scrape(http);
  REQUIRE(up.value("jq_queue_ready", named("down.q")) == 1);
  REQUIRE(up.value("jq_constraint_waiting_jobs", {{"constraint", "down.c"}}) == 0);
  redis.stop();
  REQUIRE(wait_until([&] { return !daemon.ready(); }, 10s));
  const Scrape s = scrape(http);
  CHECK(s.value("jq_jobs_pushed_total", named("down.q")) == 1);
  CHECK(s.label_values("jq_queue_ready", "name").empty());
  CHECK(s.type("jq_queue_ready") == "gauge");
  CHECK(s.label_values("jq_constraint_waiting_jobs", "constraint").empty());
  CHECK(s.type("jq_constraint_waiting_jobs") == "gauge");
}

TEST_CASE(
    "constraint series show a concurrency limit's running, waiting, started and held jobs, and "
    "its limits",
    "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  const json one_at_a_time = {
      {"name", "one-at-a-time"}, {"match", {{"name", "c.slow"}}}, {"concurrency", 1}};
  REQUIRE(http.post("/v1/constraints", one_at_a_time).status == 201);
  const json slowly = {{"name", "slowly"},
                       {"match", {{"name", "c.never"}}},
                       {"rate", {{"limit", 30}, {"period", 60}, {"burst", 5}}}};
  REQUIRE(http.post("/v1/constraints", slowly).status == 201);
  wait_for_constraints(daemon, 2);
  const json slow_job = {{"name", "c.slow"}, {"argument", {{"sleep_ms", 2000}}}};
  push(http, slow_job);
  push(http, slow_job);
  Worker worker;
  register_worker(http, worker.url(), {"c.slow"});  // 4 at once: the constraint is the limit

  const json one = {{"constraint", "one-at-a-time"}};
  REQUIRE(wait_until(
      [&] {
        const Scrape s = scrape(http);
        return s.value("jq_constraint_running_jobs", one) == 1 &&
               s.value("jq_constraint_waiting_jobs", one) == 1;
      },
      10s));
  const Scrape held = scrape(http);
  CHECK(held.value("jq_constraint_started_total", one) == 1);
  CHECK(held.value("jq_constraint_deferred_total", one) >= 1);
  CHECK(held.value("jq_constraint_limit",
                   {{"constraint", "one-at-a-time"}, {"kind", "concurrency"}}) == 1);
  CHECK_FALSE(
      held.value("jq_constraint_limit", {{"constraint", "one-at-a-time"}, {"kind", "rate"}}));
  // 30 starts per 60 s: 0.5 a second, whatever the burst.
  CHECK(held.value("jq_constraint_limit", {{"constraint", "slowly"}, {"kind", "rate"}}) == 0.5);
  CHECK(held.value("jq_constraint_started_total", {{"constraint", "slowly"}}) == 0);
  CHECK(held.value("jq_constraint_waiting_jobs", {{"constraint", "slowly"}}) == 0);
  CHECK(held.type("jq_constraint_started") == "counter");  // the parser drops a counter's _total
  CHECK(held.type("jq_constraint_deferred") == "counter");
  CHECK(held.type("jq_constraint_running_jobs") == "gauge");
  CHECK(held.type("jq_constraint_limit") == "gauge");

  REQUIRE(wait_until([&] { return worker.stats()["received"] == 2; }, 10s));
  REQUIRE(
      wait_until([&] { return scrape(http).value("jq_constraint_running_jobs", one) == 0; }, 10s));
  const Scrape done = scrape(http);
  CHECK(done.value("jq_constraint_started_total", one) == 2);
  CHECK(done.value("jq_constraint_waiting_jobs", one) == 0);
  CHECK(worker.stats()["max_in_flight"] == 1);

  // A removed constraint is no longer listed.
  REQUIRE(http.del("/v1/constraints/slowly").status == 204);
  CHECK(scrape(http).label_values("jq_constraint_limit", "constraint") ==
        std::vector<std::string>{"one-at-a-time"});
}
