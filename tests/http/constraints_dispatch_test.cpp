// Constraints at dispatch end to end: real Redis, real jqworker servers, one or two masters
// (contract: "Constraints").
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/support/daemon.hpp"
#include "tests/support/job_calls.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/worker.hpp"

using namespace std::chrono_literals;
using jq::test::Daemon;
using jq::test::HttpClient;
using jq::test::push;
using jq::test::RedisServer;
using jq::test::register_worker;
using jq::test::wait_until;
using jq::test::Worker;
using nlohmann::json;

namespace {

void create(const HttpClient& http, json constraint) {
  auto res = http.post("/v1/constraints", constraint);
  INFO(res.body);
  REQUIRE(res.status == 201);
}

}  // namespace

TEST_CASE(
    "a keyed concurrency limit holds a tenant's extra jobs while other tenants and names "
    "run, and shows them waiting",
    "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  create(http, {{"name", "mail-per-tenant"},
                {"match", {{"name", "mail.*"}}},
                {"key", "/tenant"},
                {"concurrency", 2}});
  std::vector<std::string> a;
  for (int i = 0; i < 5; ++i) {
    a.push_back(
        push(http, {{"name", "mail.send"}, {"argument", {{"tenant", "a"}, {"sleep_ms", 300}}}}));
  }
  const std::string b = push(http, {{"name", "mail.send"}, {"argument", {{"tenant", "b"}}}});
  const std::string other = push(http, {{"name", "report"}});

  Worker mail, reports;
  register_worker(http, mail, {"mail.send"}, 10);
  register_worker(http, reports, {"report"}, 10);
  REQUIRE(wait_until([&] { return reports.stats()["received"] == 1; }, 10s));
  REQUIRE(wait_until([&] { return mail.stats()["received"] >= 3; }, 10s));  // a, a and b
  const json state = http.get("/v1/constraints/mail-per-tenant").value();
  INFO(state.dump());
  CHECK(state["running"].get<int>() <= 2);
  const json held = http.get("/v1/jobs/" + a[4]).value();
  CHECK(held["state"] == "queued");
  CHECK(held["blocked_by"] == "mail-per-tenant");

  REQUIRE(wait_until([&] { return mail.stats()["received"] == 6; }, 20s));
  CHECK(mail.stats()["max_in_flight"] == 3);  // two of tenant a, plus tenant b
  CHECK(http.get("/v1/constraints/mail-per-tenant").value()["waiting"] == 0);
}

TEST_CASE("a concurrency limit is exact across two masters on one Redis", "[http]") {
  RedisServer redis;
  Daemon first({redis.url()});
  Daemon second({redis.url()});
  create(first.http(), {{"name", "one-at-a-time"}, {"match", {{"name", "*"}}}, {"concurrency", 1}});
  // Wait until the second master has loaded it: its pushes must match it too.
  REQUIRE(wait_until(
      [&] { return second.http().get("/v1/constraints/one-at-a-time").status == 200; }, 10s));
  for (int i = 0; i < 6; ++i) {
    push((i % 2 ? first : second).http(), {{"name", "serial"}, {"argument", {{"sleep_ms", 100}}}});
  }
  Worker worker;
  register_worker(first.http(), worker, {"serial"}, 10);
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 6; }, 20s));
  CHECK(worker.stats()["max_in_flight"] == 1);
}

TEST_CASE("a master that has just started matches its first push against the constraints",
          "[http]") {
  RedisServer redis;
  Worker worker;
  {
    Daemon first({redis.url()});
    create(first.http(), {{"name", "held"}, {"match", {{"name", "early"}}}, {"paused", true}});
    register_worker(first.http(), worker, {"early", "free"}, 10);
  }
  jq::test::DaemonOptions options{redis.url()};
  options.wait_ready = false;  // push from the moment it listens
  Daemon second(options);
  auto http = second.http();
  std::string early;
  // Refused (503) until it has reached Redis; the first push it stores must be held.
  REQUIRE(wait_until(
      [&] {
        auto res = http.post("/v1/jobs", json{{"name", "early"}});
        if (res.status == 201) early = json::parse(res.body)["id"];
        return res.status == 201;
      },
      10s, 1ms));
  push(http, {{"name", "free"}});
  REQUIRE(wait_until([&] { return worker.stats()["received"] >= 1; }, 10s));
  REQUIRE(wait_until(
      [&] { return http.get("/v1/jobs/" + early).value().value("blocked_by", "") == "held"; },
      10s));
  CHECK(worker.stats()["received"] == 1);  // the free job only
}

TEST_CASE("a rate limit spreads starts over its period", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  create(http, {{"name", "slowly"},
                {"match", {{"name", "tick"}}},
                {"rate", {{"limit", 4}, {"period", 1}, {"burst", 0}}}});
  Worker worker;
  register_worker(http, worker, {"tick"}, 10);
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) push(http, {{"name", "tick"}});
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 5; }, 10s));
  // Starts at 0, 0.25, 0.5, 0.75 and 1.0 s: the last cannot come before 1 s.
  CHECK(std::chrono::steady_clock::now() - started >= 950ms);
}

// The contract: a rate counts dispatches actually sent.
TEST_CASE("a dispatch that could not reach its worker gives its rate token back", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  create(http, {{"name", "hourly"},
                {"match", {{"name", "once"}}},
                {"rate", {{"limit", 1}, {"period", 3600}, {"burst", 0}}}});
  // Nothing listens there: the job cannot be sent.
  const std::string nowhere = "http://127.0.0.1:" + std::to_string(jq::test::free_port()) + "/";
  auto registered = http.post("/v1/workers", {{"url", nowhere}, {"names", {"once"}}});
  REQUIRE(registered.status == 201);
  const std::string unreachable = registered.value()["id"];
  push(http, {{"name", "once"}});
  REQUIRE(wait_until(
      [&] { return http.get("/v1/workers/" + unreachable).value()["healthy"] == false; }, 5s));
  REQUIRE(http.del("/v1/workers/" + unreachable).status == 204);
  Worker worker;
  register_worker(http, worker, {"once"}, 1);
  // Had the failed dispatch kept the token, the job would wait an hour.
  CHECK(wait_until([&] { return worker.stats()["received"] == 1; }, 5s));
}

TEST_CASE("pausing a constraint holds what it matches, and resuming or deleting it lets them run",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  create(http, {{"name", "gate"}, {"match", {{"name", "gated"}}}, {"paused", true}});
  create(http, {{"name", "one"}, {"match", {{"name", "solo"}}}, {"concurrency", 1}});
  const std::string gated = push(http, {{"name", "gated"}});
  const std::string free = push(http, {{"name", "free"}});
  push(http, {{"name", "solo"}, {"argument", {{"sleep_ms", 60000}}}});
  const std::string second_solo = push(http, {{"name", "solo"}});
  Worker worker;
  register_worker(http, worker, {"gated", "free", "solo"}, 10);
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 2; }, 10s));  // free, first solo
  REQUIRE(wait_until(
      [&] { return http.get("/v1/jobs/" + gated).value().value("blocked_by", "") == "gate"; },
      10s));
  CHECK(http.get("/v1/jobs/" + second_solo).value()["blocked_by"] == "one");

  auto resumed = http.request("PATCH", "/v1/constraints/gate", json({{"paused", false}}).dump(),
                              {{"Content-Type", "application/json"}});
  REQUIRE(resumed.status == 200);
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 3; }, 10s));
  CHECK(http.del("/v1/constraints/one").status == 204);  // the long solo job still runs
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 4; }, 10s));
}

TEST_CASE("a new constraint also applies to the jobs already queued", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  for (int i = 0; i < 4; ++i) push(http, {{"name", "late"}, {"argument", {{"sleep_ms", 150}}}});
  create(http, {{"name", "serial"}, {"match", {{"name", "late"}}}, {"concurrency", 1}});
  REQUIRE(daemon.logged("4 stored jobs matched again against the changed constraints", 5s));
  Worker worker;
  register_worker(http, worker, {"late"}, 10);
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 4; }, 20s));
  CHECK(worker.stats()["max_in_flight"] == 1);
}

namespace {

// jqmaster's Redis user ("jq") is restricted by `restrict` while a constraint serializing the
// four queued jobs is created (the master logs `refused`), then let go by `lift`: the pass over
// the queued jobs must go again by itself, and they run one at a time.
void pass_after_restriction(const std::vector<std::string>& restrict, const std::string& refused,
                            const std::vector<std::string>& lift) {
  RedisServer redis;
  jq::test::SyncRedis admin(redis.port());
  REQUIRE(admin.call({"ACL", "SETUSER", "jq", "on", ">secret", "~*", "&*", "+@all"}).str == "OK");
  Daemon daemon(
      {.redis_url = "redis://jq:secret@127.0.0.1:" + std::to_string(redis.port()) + "/0"});
  auto http = daemon.http();
  for (int i = 0; i < 4; ++i) push(http, {{"name", "late"}, {"argument", {{"sleep_ms", 150}}}});
  REQUIRE(admin.call(restrict).str == "OK");
  create(http, {{"name", "serial"}, {"match", {{"name", "late"}}}, {"concurrency", 1}});
  REQUIRE(daemon.logged(refused, 10s));
  REQUIRE(admin.call(lift).str == "OK");
  REQUIRE(daemon.logged("4 stored jobs matched again against the changed constraints", 10s));
  Worker worker;
  register_worker(http, worker, {"late"}, 10);
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 4; }, 20s));
  CHECK(worker.stats()["max_in_flight"] == 1);
}

}  // namespace

TEST_CASE("a pass over the jobs already queued that failed goes again until it is done", "[http]") {
  // The user may touch only the constraints' and the control plane's keys: the pass over the
  // shards' jobs is refused (NOPERM). It used to wait for the next change of a constraint.
  pass_after_restriction({"ACL", "SETUSER", "jq", "resetkeys", "~*{c}*", "~*{w}*"},
                         "were not matched again against the changed constraints",
                         {"ACL", "SETUSER", "jq", "~*"});
}

TEST_CASE("a pass waits for the changed definitions and never matches against older ones",
          "[http]") {
  // The user may not read the constraints' definitions (HGETALL of the {c} hash) but may read
  // the shards' jobs: the pass finds no snapshot of the change. It used to match the queued jobs
  // against the older snapshot (no constraint) and count that as done, so they ran
  // unconstrained.
  pass_after_restriction(
      {"ACL", "SETUSER", "jq", "-hgetall", "(+hgetall ~*{[0-9]}* ~*{[0-9][0-9]}*)"},
      "the constraints could not be loaded",
      {"ACL", "SETUSER", "jq", "clearselectors", "+hgetall"});
}

TEST_CASE("a changed match lets go of the held jobs it no longer selects", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  create(http, {{"name", "gate"}, {"match", {{"name", "held.*"}}}, {"paused", true}});
  const std::string id = push(http, {{"name", "held.job"}});
  Worker worker;
  register_worker(http, worker, {"held.job"}, 10);
  REQUIRE(wait_until(
      [&] { return http.get("/v1/jobs/" + id).value().value("blocked_by", "") == "gate"; }, 10s));
  auto patched =
      http.request("PATCH", "/v1/constraints/gate", json({{"match", {{"name", "other.*"}}}}).dump(),
                   {{"Content-Type", "application/json"}});
  REQUIRE(patched.status == 200);
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 1; }, 5s));
}
