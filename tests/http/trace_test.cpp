// W3C trace propagation end to end: a push's traceparent is kept with its jobs and sent to the
// worker on every attempt; an invalid one is dropped without failing the push.
#include <catch2/catch.hpp>

#include "src/redis/keys.hpp"
#include "src/store/job_id.hpp"
#include "src/store/job_record.hpp"
#include "tests/support/daemon.hpp"
#include "tests/support/records.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/worker.hpp"

using namespace std::chrono_literals;
using jq::test::Daemon;
using jq::test::DaemonOptions;
using jq::test::HttpClient;
using jq::test::RedisServer;
using jq::test::SyncRedis;
using jq::test::wait_until;
using jq::test::Worker;
using nlohmann::json;

namespace {

constexpr int kShards = 4;
const std::string kTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
// Fast retries without jitter, so the retry comes quickly.
const std::string kFastRetry = "retry:\n  base: 0.05\n  jitter: 0\n";

struct Fixture {
  RedisServer redis;
  Daemon daemon{DaemonOptions{redis.url(), kShards, kFastRetry}};
  HttpClient http = daemon.http();

  // POSTs `body` (a job or a batch) with `traceparent` as the header of that name.
  json push(const json& body, const std::string& traceparent) {
    auto res = http.request("POST", "/v1/jobs", body.dump(),
                            {{"Content-Type", "application/json"}, {"traceparent", traceparent}});
    REQUIRE(res.status == 201);
    return res.value();
  }

  jq::store::JobRecord record(const std::string& id) {
    auto parsed = jq::store::parse_job_id(id, kShards);
    REQUIRE(parsed);
    SyncRedis check(redis.port());
    auto rec = jq::test::read_record(check, jq::redis::Keys{}, parsed->shard, parsed->field);
    REQUIRE(rec);
    return *rec;
  }
};

void register_worker(const HttpClient& http, const Worker& worker) {
  auto res = http.post("/v1/workers", {{"url", worker.url()}, {"names", {"traced"}}});
  REQUIRE(res.status == 201);
}

std::string header_seen(const Worker& worker, const std::string& lower_name) {
  const json seen = worker.stats()["headers_seen"];
  return seen.contains(lower_name) ? seen[lower_name].get<std::string>() : std::string();
}

}  // namespace

TEST_CASE("a push's traceparent reaches the worker on the first attempt and on the retry",
          "[http]") {
  Fixture f;
  Worker worker;
  // Attempt 1 fails (after a pause long enough to look at what the worker saw), attempt 2
  // succeeds.
  const json pushed = f.push({{"name", "traced"},
                              {"keep_result", true},
                              {"argument", {{"fail_until", 2}, {"sleep_ms", 300}}}},
                             kTrace);
  const std::string id = pushed["id"];
  CHECK(f.record(id).traceparent == kTrace);
  register_worker(f.http, worker);

  REQUIRE(wait_until([&] { return worker.stats()["received"] == 1; }, 10s));
  CHECK(header_seen(worker, "x-jq-attempt") == "1");
  CHECK(header_seen(worker, "traceparent") == kTrace);

  REQUIRE(wait_until([&] { return worker.stats()["received"] == 2; }, 10s));
  CHECK(header_seen(worker, "x-jq-attempt") == "2");
  CHECK(header_seen(worker, "traceparent") == kTrace);
  auto result = f.http.get("/v1/jobs/" + id + "/result?wait=10");
  CHECK(result.status == 200);
  CHECK(result.value()["type"] == "success");
}

TEST_CASE("every job of a traced batch carries the traceparent", "[http]") {
  Fixture f;
  json batch = json::array();
  batch.push_back({{"name", "a"}});
  batch.push_back({{"name", "b"}});
  const json pushed = f.push(batch, kTrace);
  REQUIRE(pushed["ids"].size() == 2);
  for (const auto& id : pushed["ids"]) CHECK(f.record(id.get<std::string>()).traceparent == kTrace);
}

TEST_CASE("an invalid traceparent is dropped and the push still succeeds", "[http]") {
  Fixture f;
  const std::vector<std::string> invalid = {
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",  // upper-case hex
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // all-zero trace id
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // all-zero parent id
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",     // no flags
      "garbage"};
  for (const std::string& traceparent : invalid) {
    INFO(traceparent);
    const json pushed = f.push({{"name", "untraced"}}, traceparent);
    CHECK(f.record(pushed["id"].get<std::string>()).traceparent.empty());
  }
}

TEST_CASE("a job pushed without a traceparent is dispatched without one", "[http]") {
  Fixture f;
  Worker worker;
  register_worker(f.http, worker);
  auto res = f.http.post("/v1/jobs", {{"name", "traced"}, {"keep_result", true}});
  REQUIRE(res.status == 201);
  const std::string id = res.value()["id"];
  CHECK(f.http.get("/v1/jobs/" + id + "/result?wait=10").value()["type"] == "success");
  CHECK(header_seen(worker, "x-jq-job-id") == id);
  CHECK(header_seen(worker, "traceparent").empty());
}
