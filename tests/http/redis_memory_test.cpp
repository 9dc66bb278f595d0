// Redis at its maxmemory (noeviction) under the real daemon: what pushers, operators and
// workers see (contract: "Security and limits", "Redis out of memory").
#include <catch2/catch.hpp>

#include <optional>

#include "src/redis/memory_info.hpp"
#include "src/redis/script_sources.hpp"
#include "tests/support/daemon.hpp"
#include "tests/support/job_calls.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/worker.hpp"

using namespace std::chrono_literals;
using jq::test::Daemon;
using jq::test::HttpClient;
using jq::test::RedisServer;
using jq::test::SyncRedis;
using jq::test::wait_until;
using jq::test::Worker;
using nlohmann::json;

namespace {

std::int64_t used_memory(SyncRedis& r) {
  auto info = jq::redis::parse_memory_info(r.call({"INFO", "memory"}).str);
  REQUIRE(info);
  return info->used;
}

void set_maxmemory(SyncRedis& r, std::int64_t bytes) {
  REQUIRE(r.call({"CONFIG", "SET", "maxmemory", std::to_string(bytes)}).str == "OK");
}

// The value of one series in /metrics; -1 when it is not there.
double series(const HttpClient& http, const std::string& name) {
  const std::string text = http.get("/metrics").body;
  const auto at = text.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + name.size() + 2));
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE(
    "pushes past Redis's maxmemory get 503 with Retry-After, nothing half-written, "
    "until memory is raised",
    "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  SyncRedis r(redis.port());
  CHECK(series(http, "jq_redis_errors_total{kind=\"oom\"}") == 0);
  set_maxmemory(r, used_memory(r) + 256 * 1024);

  // Batches of 50 jobs of 1 KiB: the limit is some hundreds of jobs away.
  json batch = json::array();
  for (int i = 0; i < 50; ++i)
    batch.push_back({{"name", "bulk"}, {"argument", std::string(1024, 'x')}});
  int accepted = 0;
  jq::test::HttpResult refused;
  for (int i = 0; i < 100 && refused.status == 0; ++i) {
    auto res = http.post("/v1/jobs", batch);
    if (res.status == 201) {
      accepted += 50;
    } else {
      refused = res;
    }
  }
  REQUIRE(refused.status == 503);
  CHECK(accepted > 0);
  CHECK(refused.value()["error"] == "unavailable");
  CHECK(refused.header("retry-after") == "5");
  const std::string message = refused.value()["message"];
  CHECK(message.find("Redis is out of memory") != std::string::npos);
  CHECK(message.find("raise Redis's maxmemory") != std::string::npos);
  CHECK(message.find("fetch kept results") != std::string::npos);

  // Every job the store counts was acknowledged, and each one is in its queue.
  auto stats = http.get("/v1/stats");
  REQUIRE(stats.status == 200);  // reads work over maxmemory
  CHECK(stats.value()["pushed"] == accepted);
  CHECK(stats.value()["ready"] == accepted);

  auto ready = http.get("/readyz");
  CHECK(ready.status == 503);
  CHECK(ready.value()["message"].get<std::string>().find("Redis is out of memory") !=
        std::string::npos);
  CHECK(series(http, "jq_redis_errors_total{kind=\"oom\"}") >= 1);

  set_maxmemory(r, 0);
  CHECK(http.get("/readyz").status == 200);
  CHECK(http.post("/v1/jobs", batch).status == 201);
  CHECK(http.get("/v1/stats").value()["pushed"] == accepted + 50);
}

TEST_CASE(
    "a batch whose keyed jobs go to several shards is stored whole or not at all when Redis "
    "fills up in between",
    "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});  // 4 shards
  auto http = daemon.http();
  SyncRedis r(redis.port());
  const auto keys = jq::test::keys_in_different_shards(2, 4);
  // The first shard's job alone takes Redis past its maxmemory: stored one shard after another,
  // the second shard's part was refused and the first stayed, under a 503.
  const json batch = json::array(
      {{{"name", "keyed"}, {"unique_key", keys[0]}, {"argument", std::string(200 * 1024, 'x')}},
       {{"name", "keyed"}, {"unique_key", keys[1]}, {"argument", 1}}});
  set_maxmemory(r, used_memory(r) + 300 * 1024);
  auto pushed = http.post("/v1/jobs", batch);
  const int stored = http.get("/v1/stats").value()["pushed"];
  INFO(pushed.body);
  if (pushed.status == 201) {
    CHECK(stored == 2);
  } else {
    CHECK(pushed.status == 503);
    CHECK(stored == 0);
    // Once Redis has room, the same batch is stored whole.
    set_maxmemory(r, 0);
    REQUIRE(http.post("/v1/jobs", batch).status == 201);
    CHECK(http.get("/v1/stats").value()["pushed"] == 2);
  }
}

TEST_CASE(
    "while Redis is out of memory the jobs already stored still run, retry and hand over "
    "their results",
    "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, "retry:\n  base: 0.05\n  max: 0.1\n  jitter: 0\n"});
  auto http = daemon.http();
  SyncRedis r(redis.port());
  for (int i = 0; i < 20; ++i) jq::test::push(http, {{"name", "work"}, {"argument", i}});
  const std::string kept =
      jq::test::push(http, {{"name", "work"}, {"argument", "mine"}, {"keep_result", true}});
  const std::string failing =
      jq::test::push(http, {{"name", "work"}, {"argument", {{"fail", true}}}, {"max_retry", 1000}});
  set_maxmemory(r, 1);  // whatever Redis holds is above it
  CHECK(http.post("/v1/jobs", {{"name", "work"}}).status == 503);

  Worker worker;
  jq::test::register_worker(http, worker, {"work"}, 4);  // workers may register over maxmemory
  REQUIRE(wait_until([&] { return http.get("/v1/stats").value()["succeeded"] == 21; }, 20s));
  auto result = http.get("/v1/jobs/" + kept + "/result");
  REQUIRE(result.status == 200);
  CHECK(result.value()["result"] == "mine");
  // Failures schedule retries and retries come due again: 20 attempts take about two seconds.
  CHECK(wait_until([&] { return http.get("/v1/jobs/" + failing).value()["attempts"] >= 20; }, 20s));
  CHECK(http.get("/readyz").status == 503);

  // The dashboard's worker counters are still recorded (updateWorkerStats runs over maxmemory:
  // it changes a few fields of registered workers only).
  CHECK(wait_until([&] { return http.get("/v1/workers").value().at(0)["succeeded"] == 21; }, 5s));
  CHECK(count_of(daemon.log(), "worker counters not recorded") == 0);
  CHECK(daemon.wait_exit(0ms) == std::nullopt);
}

TEST_CASE("the master warns at start when Redis would evict keys, or that it could not tell",
          "[http]") {
  RedisServer redis;
  SyncRedis r(redis.port());
  REQUIRE(r.call({"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"}).str == "OK");
  {
    Daemon daemon({redis.url()});
    CHECK(daemon.log().find("Redis's maxmemory-policy is allkeys-lru") != std::string::npos);
  }
  // A user that may not run INFO, as with some managed Redis services: the master still serves.
  REQUIRE(r.call({"ACL", "SETUSER", "jq", "on", ">secret", "~*", "&*", "+@all", "-info"}).str ==
          "OK");
  Daemon daemon({"redis://jq:secret@127.0.0.1:" + std::to_string(redis.port()) + "/0"});
  CHECK(daemon.log().find("could not check Redis's maxmemory-policy") != std::string::npos);
  CHECK(daemon.http().get("/readyz").status == 200);
  CHECK(jq::test::push(daemon.http(), {{"name", "n"}}).size() > 0);
}

namespace {

// A master started against a Redis already over its maxmemory, once it serves reads: the store's
// check at connect (initStore) runs over maxmemory.
struct MasterOnFullRedis {
  MasterOnFullRedis() {
    set_maxmemory(r, 1);
    daemon.emplace(jq::test::DaemonOptions{.redis_url = redis.url(), .wait_ready = false});
    REQUIRE(wait_until([&] { return daemon->http().get("/v1/stats").status == 200; }, 10s));
  }
  RedisServer redis;
  SyncRedis r{redis.port()};
  std::optional<Daemon> daemon;
};

}  // namespace

TEST_CASE("a master starts against a Redis that is already full, and serves what it can",
          "[http]") {
  MasterOnFullRedis full;
  auto http = full.daemon->http();
  auto ready = http.get("/readyz");
  CHECK(ready.status == 503);
  CHECK(ready.header("retry-after") == "5");
  CHECK(ready.value()["message"].get<std::string>().find("Redis is out of memory") !=
        std::string::npos);
  CHECK(http.post("/v1/jobs", {{"name", "n"}}).status == 503);
}

TEST_CASE("scripts sent by their source while Redis was full go by FCALL once it has room",
          "[http]") {
  MasterOnFullRedis full;
  SyncRedis& r = full.r;
  Daemon& daemon = *full.daemon;
  auto http = daemon.http();
  const std::string library(jq::redis::library_name());
  CHECK(r.call({"FUNCTION", "LIST", "LIBRARYNAME", library}).elements.empty());  // refused

  set_maxmemory(r, 0);  // room again: no reconnect, the master's next tries load it
  CHECK(wait_until(
      [&] {
        return !r.call({"FUNCTION", "LIST", "LIBRARYNAME", library}).elements.empty();
      },
      10s));
  CHECK(daemon.logged("scripts go by FCALL again", 5s));
  // Calls built by their source before that (the one that loaded it among them) may still be on
  // their way; from then on a push runs FCALL, no EVAL.
  CHECK(wait_until(
      [&] {
        r.call({"CONFIG", "RESETSTAT"});
        if (http.post("/v1/jobs", {{"name", "n"}}).status != 201) return false;
        const std::string stats = r.call({"INFO", "commandstats"}).str;
        return stats.find("cmdstat_fcall:") != std::string::npos &&
               stats.find("cmdstat_eval:") == std::string::npos;
      },
      5s));
}

TEST_CASE(
    "a library Redis refuses for good stops the master's retries, said once, and scripts "
    "keep going by their source",
    "[http]") {
  MasterOnFullRedis full;
  SyncRedis& r = full.r;
  Daemon& daemon = *full.daemon;
  auto http = daemon.http();
  const std::string library(jq::redis::library_name());
  // Room again, but the master's Redis user may no longer load functions.
  REQUIRE(r.call({"ACL", "SETUSER", "default", "-function|load"}).str == "OK");
  set_maxmemory(r, 0);
  const std::string refused = "Redis refused the script library";
  REQUIRE(daemon.logged(refused, 10s));
  CHECK(daemon.log().find("FUNCTION LOAD") != std::string::npos);  // says what to grant
  REQUIRE(r.call({"CONFIG", "RESETSTAT"}).str == "OK");
  // Past the next retry's time, with calls going on: no more tries, and pushes are stored.
  const auto until = std::chrono::steady_clock::now() + 2500ms;
  while (std::chrono::steady_clock::now() < until) {
    REQUIRE(http.post("/v1/jobs", {{"name", "n"}}).status == 201);
  }
  const std::string stats = r.call({"INFO", "commandstats"}).str;
  CHECK(stats.find("cmdstat_function|load:") == std::string::npos);
  CHECK(stats.find("cmdstat_eval:") != std::string::npos);
  const std::string log = daemon.log();
  CHECK(log.find(refused) == log.rfind(refused));
  CHECK(r.call({"FUNCTION", "LIST", "LIBRARYNAME", library}).elements.empty());
}
