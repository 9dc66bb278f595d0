// /v1/queues, /v1/dead and /v1/stats against the real daemon and Redis. No worker is registered,
// so pushed jobs stay ready; running, scheduled and dead jobs are made by running the real
// reserveJobs and failJob scripts, as a dispatcher would.
#include <catch2/catch.hpp>

#include "src/redis/bindings/fail_job.hpp"
#include "src/redis/bindings/reserve_jobs.hpp"
#include "src/redis/keys.hpp"
#include "src/store/job_id.hpp"
#include "src/util/time.hpp"
#include "tests/support/daemon.hpp"
#include "tests/support/redis_server.hpp"

using jq::redis::bindings::FailJob;
using jq::redis::bindings::ReserveJobs;
using jq::test::Daemon;
using jq::test::DaemonOptions;
using jq::test::HttpClient;
using jq::test::HttpResult;
using jq::test::RedisServer;
using jq::test::SyncRedis;
using jq::test::wait_until;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr int kShards = 4;
constexpr std::int64_t kFailedAtMs = 1700000000000;
// Retries are due an hour after the failure: the daemon's promoter leaves them alone.
constexpr std::int64_t kBackoffMs = 3600 * 1000;

std::int64_t now_ms() {
  return jq::epoch_ms(std::chrono::system_clock::now());
}

std::string failure_bytes(const std::string& message) {
  const auto bytes = json::to_msgpack(json{{"type", "failure"}, {"message", message}});
  return std::string(bytes.begin(), bytes.end());
}

struct Fixture {
  RedisServer redis;
  Daemon daemon{DaemonOptions{redis.url(), kShards}};
  HttpClient http = daemon.http();
  SyncRedis check{redis.port()};
  jq::redis::Keys keys;

  std::string push(const std::string& name) {
    auto res = http.post("/v1/jobs", {{"name", name}});
    REQUIRE(res.status == 201);
    return res.value()["id"];
  }

  HttpResult post(const std::string& target) const {
    return http.request("POST", target, "", {{"Accept", "application/json"}});
  }

  // Pushes one job and reserves it with reserveJobs: it is then running in attempt 1. No other
  // job of `name` may be ready in the shard the push lands on.
  std::string push_running(const std::string& name) {
    const std::string id = push(name);
    auto parsed = *jq::store::parse_job_id(id, kShards);
    auto reply =
        check.eval(ReserveJobs::call(ReserveJobs::keys(keys, parsed.shard, name),
                                     {now_ms(), 1, std::nullopt, "", name, parsed.shard, "t"}));
    auto reserved = ReserveJobs::decode(reply);
    REQUIRE(reserved);
    REQUIRE(reserved->jobs.size() == 1);
    REQUIRE(reserved->jobs[0].field == parsed.field);
    return id;
  }

  // failJob for attempt 1 of a running job, failing at `at_ms`: scheduled for a retry an hour
  // later, or dead.
  void fail(const std::string& id, bool retry, std::int64_t at_ms) {
    auto parsed = *jq::store::parse_job_id(id, kShards);
    const int s = parsed.shard;
    auto reply =
        check.eval(FailJob::call(FailJob::keys(keys, s), {parsed.field,
                                                          1,
                                                          failure_bytes("boom " + id),
                                                          retry,
                                                          "boom",
                                                          at_ms,
                                                          {kBackoffMs, kBackoffMs, 0, 3600},
                                                          keys.events_channel(0),
                                                          s}));
    auto failed = FailJob::decode(reply);
    REQUIRE(failed);
    REQUIRE(failed->status == (retry ? FailJob::Status::scheduled : FailJob::Status::dead));
  }

  // A running job that failed now and may retry: due in an hour.
  void schedule(const std::string& id) { fail(id, true, now_ms()); }

  std::string push_dead(const std::string& name, std::int64_t failed_at_ms) {
    const std::string id = push_running(name);
    fail(id, false, failed_at_ms);
    return id;
  }

  json queue(const std::string& name) {
    auto res = http.get("/v1/queues/" + name);
    REQUIRE(res.status == 200);
    return res.value();
  }

  json dead(const std::string& query = "") {
    auto res = http.get("/v1/dead" + query);
    REQUIRE(res.status == 200);
    return res.value();
  }
};

std::vector<std::string> ids_of(const json& list) {
  std::vector<std::string> ids;
  for (const auto& e : list) ids.push_back(e["id"]);
  return ids;
}

// A paused queue with no jobs in any state.
json empty_paused_queue(const std::string& name) {
  return json{{"name", name}, {"ready", 0},     {"scheduled", 0},  {"running", 0},
              {"dead", 0},    {"paused", true}, {"lag_seconds", 0}};
}

json counts_of(json queue) {
  queue.erase("lag_seconds");
  return queue;
}

}  // namespace

TEST_CASE("queues list every name with its ready, scheduled, running and dead counts", "[http]") {
  Fixture f;
  // One push per request lands on the next shard, so each reserve below finds only its own job.
  f.push_running("email");
  f.schedule(f.push_running("resize"));
  f.push_dead("email", kFailedAtMs);
  REQUIRE(f.http
              .post("/v1/jobs",
                    json::array({{{"name", "email"}}, {{"name", "email"}}, {{"name", "email"}}}))
              .status == 201);
  REQUIRE(
      f.http.post("/v1/jobs", json::array({{{"name", "resize"}}, {{"name", "resize"}}})).status ==
      201);

  auto res = f.http.get("/v1/queues");
  REQUIRE(res.status == 200);
  json list = res.value();
  REQUIRE(list.size() == 2);
  const json email = {{"name", "email"}, {"ready", 3}, {"scheduled", 0},
                      {"running", 1},    {"dead", 1},  {"paused", false}};
  const json resize = {{"name", "resize"}, {"ready", 2}, {"scheduled", 1},
                       {"running", 0},     {"dead", 0},  {"paused", false}};
  CHECK(counts_of(list[0]) == email);
  CHECK(counts_of(list[1]) == resize);
  CHECK(list[0]["lag_seconds"].is_number());
  CHECK(list[0]["lag_seconds"] >= 0);
  CHECK(counts_of(f.queue("resize")) == resize);

  auto stats = f.http.get("/v1/stats").value();
  CHECK(stats["pushed"] == 8);
  CHECK(stats["ready"] == 5);
  CHECK(stats["scheduled"] == 1);
  CHECK(stats["running"] == 1);
  CHECK(stats["failed"] == 2);
  CHECK(stats["retried"] == 1);
  CHECK(stats["dead"] == 1);
  CHECK(stats["succeeded"] == 0);
  CHECK(stats["workers"] == 0);
}

TEST_CASE("lag_seconds is the age of the oldest ready job", "[http]") {
  Fixture f;
  f.push("email");
  CHECK(wait_until([&] { return f.queue("email")["lag_seconds"] >= 0.05; }, 2s));
  f.push_running("resize");
  CHECK(f.queue("resize")["lag_seconds"] == 0);  // nothing ready
}

TEST_CASE("a queue never pushed to nor paused is 404", "[http]") {
  Fixture f;
  auto res = f.http.get("/v1/queues/nothing");
  CHECK(res.status == 404);
  CHECK(res.value()["error"] == "not_found");
  CHECK(f.http.get("/v1/queues").value() == json::array());
}

TEST_CASE("a name with no jobs yet can be paused and is then listed", "[http]") {
  Fixture f;
  auto paused = f.post("/v1/queues/later/pause");
  REQUIRE(paused.status == 200);
  CHECK(paused.value() == empty_paused_queue("later"));
  auto list = f.http.get("/v1/queues").value();
  REQUIRE(list.size() == 1);
  CHECK(list[0]["name"] == "later");
  CHECK(list[0]["paused"] == true);
  CHECK(f.queue("later")["paused"] == true);

  auto resumed = f.post("/v1/queues/later/resume");
  REQUIRE(resumed.status == 200);
  CHECK(resumed.value()["paused"] == false);
  CHECK(f.http.get("/v1/queues/later").status == 404);  // forgotten again
}

TEST_CASE("pause and resume toggle paused, and a paused queue keeps accepting pushes", "[http]") {
  Fixture f;
  f.push("email");
  f.push("resize");
  auto paused = f.post("/v1/queues/email/pause");
  REQUIRE(paused.status == 200);
  CHECK(paused.value()["paused"] == true);
  CHECK(paused.value()["ready"] == 1);
  CHECK(f.check.call({"SISMEMBER", f.keys.paused(), "email"}).integer == 1);
  f.push("email");
  CHECK(f.queue("email")["paused"] == true);
  CHECK(f.queue("email")["ready"] == 2);
  CHECK(f.queue("resize")["paused"] == false);
  CHECK(f.post("/v1/queues/email/pause").value()["paused"] == true);  // twice is fine

  auto resumed = f.post("/v1/queues/email/resume");
  REQUIRE(resumed.status == 200);
  CHECK(resumed.value()["paused"] == false);
  CHECK(f.queue("email")["paused"] == false);
  CHECK(f.check.call({"SISMEMBER", f.keys.paused(), "email"}).integer == 0);
}

TEST_CASE("pausing a name that is not a job name is 400 naming the field", "[http]") {
  Fixture f;
  auto res = f.post("/v1/queues/-bad/pause");
  CHECK(res.status == 400);
  CHECK(res.value()["error"] == "invalid_job");
  CHECK(res.value()["field"] == "name");
  CHECK(f.http.get("/v1/queues").value() == json::array());
}

TEST_CASE("dead jobs are listed newest first across shards, by name and up to a limit", "[http]") {
  Fixture f;
  const std::string first = f.push_dead("email", kFailedAtMs + 1000);
  const std::string third = f.push_dead("resize", kFailedAtMs + 3000);
  const std::string second = f.push_dead("email", kFailedAtMs + 2000);
  f.push("email");  // a queued job is not dead

  json all = f.dead();
  CHECK(ids_of(all) == std::vector<std::string>{third, second, first});
  REQUIRE(all.size() == 3);
  CHECK(all[0] == json{{"id", third},
                       {"name", "resize"},
                       {"attempts", 1},
                       {"failed_at", jq::iso8601_utc(kFailedAtMs + 3000)},
                       {"result", {{"type", "failure"}, {"message", "boom " + third}}}});
  CHECK(ids_of(f.dead("?name=email")) == std::vector<std::string>{second, first});
  CHECK(ids_of(f.dead("?limit=1")) == std::vector<std::string>{third});
  CHECK(ids_of(f.dead("?name=email&limit=1")) == std::vector<std::string>{second});
  CHECK(f.dead("?name=other").empty());
  CHECK(f.queue("email")["dead"] == 2);

  // In MessagePack the failure object goes out exactly as it was stored.
  auto packed = f.http.request("GET", "/v1/dead?limit=1", "", {{"Accept", "application/msgpack"}});
  CHECK(packed.header("content-type") == "application/msgpack");
  CHECK(packed.body.find(failure_bytes("boom " + third)) != std::string::npos);
}

TEST_CASE("a dead list limit outside 1-1000 is 400 naming the field", "[http]") {
  Fixture f;
  for (const std::string limit : {"0", "1001", "x", "-1", "1.5", "", "nan", "inf", "1e400"}) {
    INFO("limit=" << limit);
    auto res = f.http.get("/v1/dead?limit=" + limit);
    CHECK(res.status == 400);
    CHECK(res.value()["error"] == "bad_request");
    CHECK(res.value()["field"] == "limit");
  }
  CHECK(f.http.get("/v1/dead?limit=1000").status == 200);
}

// A name no job can have answered an empty list, as if there were nothing to fix.
TEST_CASE("a dead list name that no job could have is 400 naming the field", "[http]") {
  Fixture f;
  for (const std::string& name : {std::string("bad%20name"), std::string(129, 'n')}) {
    INFO("name=" << name);
    auto res = f.http.get("/v1/dead?name=" + name);
    CHECK(res.status == 400);
    CHECK(res.value()["error"] == "bad_request");
    CHECK(res.value()["field"] == "name");
  }
  CHECK(f.http.get("/v1/dead?name=email").status == 200);
  CHECK(f.http.get("/v1/dead?name=").status == 200);  // every name
}

TEST_CASE("a retried dead job is queued again with its attempts reset", "[http]") {
  Fixture f;
  const std::string id = f.push_dead("email", kFailedAtMs);
  auto retried = f.post("/v1/dead/" + id + "/retry");
  REQUIRE(retried.status == 200);
  CHECK(retried.value() == json{{"id", id}, {"state", "queued"}});

  auto job = f.http.get("/v1/jobs/" + id).value();
  CHECK(job["state"] == "queued");
  CHECK(job["attempts"] == 0);
  auto email = f.queue("email");
  CHECK(email["ready"] == 1);
  CHECK(email["dead"] == 0);
  CHECK(f.dead().empty());

  auto again = f.post("/v1/dead/" + id + "/retry");
  CHECK(again.status == 404);
  CHECK(again.value()["error"] == "not_found");
  CHECK(f.post("/v1/dead/garbage/retry").status == 404);
  CHECK(f.post("/v1/dead/99-000000001/retry").status == 404);
}

TEST_CASE("a deleted dead job is gone", "[http]") {
  Fixture f;
  const std::string id = f.push_dead("email", kFailedAtMs);
  const std::string queued = f.push("email");
  CHECK(f.http.del("/v1/dead/" + id).status == 204);
  CHECK(f.http.get("/v1/jobs/" + id).status == 404);
  CHECK(f.dead().empty());
  CHECK(f.queue("email")["dead"] == 0);

  auto again = f.http.del("/v1/dead/" + id);
  CHECK(again.status == 404);
  CHECK(again.value()["error"] == "not_found");
  CHECK(f.http.del("/v1/dead/" + queued).status == 404);  // only dead jobs
  CHECK(f.http.get("/v1/jobs/" + queued).value()["state"] == "queued");
  CHECK(f.http.del("/v1/dead/garbage").status == 404);
}

TEST_CASE("cancelling a scheduled job takes it out of the queue's scheduled count", "[http]") {
  Fixture f;
  const std::string id = f.push_running("email");
  f.schedule(id);
  CHECK(f.queue("email")["scheduled"] == 1);
  CHECK(f.http.del("/v1/jobs/" + id).status == 204);
  CHECK(f.queue("email")["scheduled"] == 0);
}

TEST_CASE("stats count pushes and ready jobs", "[http]") {
  Fixture f;
  auto empty = f.http.get("/v1/stats");
  REQUIRE(empty.status == 200);
  CHECK(empty.value()["pushed"] == 0);
  CHECK(empty.value()["ready"] == 0);

  for (int i = 0; i < 5; ++i) f.push(i % 2 == 0 ? "email" : "resize");
  REQUIRE(f.http.post("/v1/jobs", json::array({{{"name", "a"}}, {{"name", "b"}}})).status == 201);
  json stats = f.http.get("/v1/stats").value();
  CHECK(stats["pushed"] == 7);
  CHECK(stats["ready"] == 7);
  CHECK(stats["scheduled"] == 0);
  CHECK(stats["running"] == 0);
  CHECK(stats["dead"] == 0);
  CHECK(stats["workers"] == 0);
  CHECK(stats["uptime_seconds"].is_number());
  CHECK(stats["uptime_seconds"] > 0);
  for (const char* key : {"succeeded", "failed", "retried"}) CHECK(stats[key] == 0);
}

TEST_CASE("queues and dead jobs still answer after Redis forgets its scripts", "[http]") {
  Fixture f;
  f.push("email");
  const std::string dead = f.push_dead("email", kFailedAtMs);
  REQUIRE(f.check.call({"FUNCTION", "FLUSH"}).str == "OK");
  CHECK(f.queue("email")["ready"] == 1);
  REQUIRE(f.check.call({"FUNCTION", "FLUSH"}).str == "OK");
  CHECK(f.http.get("/v1/queues").value()[0]["dead"] == 1);
  REQUIRE(f.check.call({"FUNCTION", "FLUSH"}).str == "OK");
  CHECK(ids_of(f.dead()) == std::vector<std::string>{dead});
}

TEST_CASE("lag is 0 once nothing is ready: after a cancel, a dead job's delete and retries",
          "[http]") {
  Fixture f;
  REQUIRE(f.post("/v1/queues/lagtest/pause").status == 200);
  const std::string only = f.push("lagtest");
  CHECK(f.queue("lagtest")["lag_seconds"] > 0);
  REQUIRE(f.http.del("/v1/jobs/" + only).status == 204);
  CHECK(f.queue("lagtest") == empty_paused_queue("lagtest"));

  const std::string older = f.push("lagtest");
  const std::string newer = f.push("lagtest");
  REQUIRE(f.http.del("/v1/jobs/" + older).status == 204);
  CHECK(f.queue("lagtest")["ready"] == 1);
  CHECK(f.queue("lagtest")["lag_seconds"] > 0);
  REQUIRE(f.http.del("/v1/jobs/" + newer).status == 204);
  CHECK(f.queue("lagtest")["lag_seconds"] == 0);

  // A dead job retried is ready (lag counts it); cancelled again, nothing is left to lag.
  const std::string dead = f.push_dead("lagtest", kFailedAtMs);
  CHECK(f.queue("lagtest")["lag_seconds"] == 0);
  REQUIRE(f.post("/v1/dead/" + dead + "/retry").status == 200);
  CHECK(f.queue("lagtest")["ready"] == 1);
  CHECK(f.queue("lagtest")["lag_seconds"] > 0);
  REQUIRE(f.http.del("/v1/jobs/" + dead).status == 204);
  CHECK(f.queue("lagtest")["lag_seconds"] == 0);

  // A deleted dead job leaves no count behind; a job waiting for its retry has no lag either.
  const std::string deleted = f.push_dead("lagtest", kFailedAtMs);
  REQUIRE(f.http.del("/v1/dead/" + deleted).status == 204);
  const std::string retrying = f.push_running("lagtest");
  f.schedule(retrying);
  CHECK(counts_of(f.queue("lagtest")) == json{{"name", "lagtest"},
                                              {"ready", 0},
                                              {"scheduled", 1},
                                              {"running", 0},
                                              {"dead", 0},
                                              {"paused", true}});
  CHECK(f.queue("lagtest")["lag_seconds"] == 0);
}
