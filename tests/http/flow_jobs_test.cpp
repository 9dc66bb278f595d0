// Delayed, unique and ordered jobs end to end: the daemon, a real Redis, real jqworker servers
// (contract: "The job", "Unique jobs", "Ordered jobs").
#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "src/util/time.hpp"
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

const std::string kFastRetry = "retry:\n  base: 0.05\n  max: 0.2\n  jitter: 0\n";

json job_of(const HttpClient& http, const std::string& id) {
  auto res = http.get("/v1/jobs/" + id);
  REQUIRE(res.status == 200);
  return res.value();
}

std::int64_t now_ms() {
  return jq::epoch_ms(std::chrono::system_clock::now());
}

}  // namespace

TEST_CASE("a delayed job is scheduled with its ready_at and runs when it is due", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  Worker worker;
  register_worker(http, worker, {"later"}, 4);

  const std::int64_t pushed_at = now_ms();
  const std::string id = push(http, {{"name", "later"}, {"delay", 0.4}});
  const json scheduled = job_of(http, id);
  CHECK(scheduled["state"] == "scheduled");
  REQUIRE(scheduled.contains("ready_at"));
  CHECK(http.get("/v1/stats").value()["scheduled"] == 1);
  CHECK(http.get("/v1/queues/later").value()["scheduled"] == 1);

  REQUIRE(wait_until([&] { return worker.stats()["received"] == 1; }, 10s));
  const std::int64_t ran_after = now_ms() - pushed_at;
  CHECK(ran_after >= 400);
  CHECK(ran_after < 400 + 1000);  // the promoter wakes at the due time; generous for CI
}

TEST_CASE("a job with a past run_at runs at once, and a delayed job can be cancelled", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  const std::string cancelled = push(http, {{"name", "later"}, {"delay", 0.2}});
  CHECK(http.del("/v1/jobs/" + cancelled).status == 204);
  CHECK(http.get("/v1/jobs/" + cancelled).status == 404);
  const std::string past = push(http, {{"name", "later"}, {"run_at", "2020-01-01T00:00:00Z"}});
  CHECK(job_of(http, past)["state"] == "queued");

  // A job due after the cancelled one: once it ran, the cancelled one's time has passed too.
  const std::string sentinel = push(http, {{"name", "later"}, {"delay", 0.3}});
  Worker worker;
  register_worker(http, worker, {"later"}, 4);
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 2; }, 10s));
  CHECK(worker.stats()["order"] == json::array({past, sentinel}));
}

TEST_CASE(
    "50 racing pushes of one unique key from 10 connections create exactly one job, "
    "across two masters",
    "[http]") {
  RedisServer redis;
  Daemon first({redis.url()});
  Daemon second({redis.url()});
  std::atomic<int> created{0}, duplicates{0}, other{0};
  std::mutex ids_mutex;
  std::set<std::string> ids;
  std::vector<std::thread> pushers;
  for (int c = 0; c < 10; ++c) {
    pushers.emplace_back([&, c] {
      HttpClient http = (c % 2 == 0 ? first : second).http();
      for (int i = 0; i < 5; ++i) {
        auto res = http.post("/v1/jobs", {{"name", "invoice"}, {"unique_key", "order-42"}});
        if (res.status == 201) {
          ++created;
        } else if (res.status == 200 && res.value()["duplicate"] == true) {
          ++duplicates;
        } else {
          ++other;
        }
        std::lock_guard lock(ids_mutex);
        ids.insert(res.value().value("id", ""));
      }
    });
  }
  for (auto& t : pushers) t.join();
  CHECK(created == 1);
  CHECK(duplicates == 49);
  CHECK(other == 0);
  CHECK(ids.size() == 1);
  CHECK(first.http().get("/v1/stats").value()["pushed"] == 1);
}

TEST_CASE("a unique job's claim ends when it succeeds, and a batch names its duplicates",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  auto batch = http.post("/v1/jobs", json::array({{{"name", "mail"}, {"unique_key", "u1"}},
                                                  {{"name", "mail"}},
                                                  {{"name", "mail"}, {"unique_key", "u1"}}}));
  REQUIRE(batch.status == 201);
  const json ids = batch.value()["ids"];
  CHECK(ids[2] == ids[0]);
  CHECK(batch.value()["duplicates"] == json::array({2}));
  CHECK(job_of(http, ids[0])["unique_key"] == "u1");

  auto only_duplicates =
      http.post("/v1/jobs", json::array({{{"name", "mail"}, {"unique_key", "u1"}}}));
  CHECK(only_duplicates.status == 200);
  CHECK(only_duplicates.value() == json({{"ids", {ids[0]}}, {"duplicates", {0}}}));

  Worker worker;
  register_worker(http, worker, {"mail"}, 4);
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 2; }, 10s));
  REQUIRE(wait_until(
      [&] { return http.get("/v1/jobs/" + ids[0].get<std::string>()).status == 404; }, 10s));
  const std::string again = push(http, {{"name", "mail"}, {"unique_key", "u1"}});
  CHECK(again != ids[0]);
}

TEST_CASE("a unique job with unique_until started can be pushed again once it runs", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  const std::string id = push(http, {{"name", "slow"},
                                     {"argument", {{"sleep_ms", 2000}}},
                                     {"unique_key", "k"},
                                     {"unique_until", "started"}});
  auto held = http.post("/v1/jobs", {{"name", "slow"}, {"unique_key", "k"}});
  CHECK(held.status == 200);
  Worker worker;
  register_worker(http, worker, {"slow"}, 4);
  REQUIRE(wait_until([&] { return job_of(http, id)["state"] == "running"; }, 10s));
  auto after_start = http.post("/v1/jobs", {{"name", "slow"}, {"unique_key", "k"}});
  CHECK(after_start.status == 201);
  CHECK(after_start.value()["id"] != id);
}

TEST_CASE(
    "jobs of one ordering key run one at a time in push order, keys in parallel, and a "
    "retry keeps its place",
    "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, kFastRetry});
  auto http = daemon.http();
  std::vector<std::string> a, b;
  // The first job of key a fails its first attempt; the others of a wait for its retry.
  a.push_back(push(http, {{"name", "step"},
                          {"argument", {{"sleep_ms", 50}, {"fail_until", 2}}},
                          {"ordering_key", "a"}}));
  for (int i = 0; i < 4; ++i) {
    // Priorities that would reverse the order if they counted within the key.
    a.push_back(push(http, {{"name", i % 2 ? "step" : "other"},
                            {"priority", -i},
                            {"argument", {{"sleep_ms", 50}}},
                            {"ordering_key", "a"}}));
    b.push_back(push(http, {{"name", "step"},
                            {"priority", -i},
                            {"argument", {{"sleep_ms", 50}}},
                            {"ordering_key", "b"}}));
  }
  const json waiting = job_of(http, a[2]);
  CHECK(waiting["state"] == "queued");
  CHECK(waiting["blocked_by"] == "ordering_key");
  CHECK(waiting["ordering_key"] == "a");

  Worker worker;
  register_worker(http, worker, {"step", "other"}, 8);
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 10; }, 20s));
  const json stats = worker.stats();
  INFO(stats.dump());
  CHECK(stats["max_in_flight"] == 2);  // one per key, both keys at once
  std::vector<std::string> seen_a, seen_b;
  for (const auto& id : stats["order"]) {
    const std::string s = id.get<std::string>();
    if (std::find(a.begin(), a.end(), s) != a.end()) seen_a.push_back(s);
    if (std::find(b.begin(), b.end(), s) != b.end()) seen_b.push_back(s);
  }
  std::vector<std::string> expected_a = {a[0]};  // its failed attempt, then its retry
  expected_a.insert(expected_a.end(), a.begin(), a.end());
  CHECK(seen_a == expected_a);
  CHECK(seen_b == b);
}

TEST_CASE("cancelling the running key's next job lets the one after it run", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  const std::string first = push(http, {{"name", "o"}, {"ordering_key", "k"}});
  const std::string second = push(http, {{"name", "o"}, {"ordering_key", "k"}});
  const std::string third = push(http, {{"name", "o"}, {"ordering_key", "k"}});
  CHECK(http.del("/v1/jobs/" + second).status == 204);
  CHECK(http.del("/v1/jobs/" + first).status == 204);
  CHECK(job_of(http, third).contains("blocked_by") == false);
  Worker worker;
  register_worker(http, worker, {"o"}, 1);
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 1; }, 10s));
  CHECK(worker.stats()["order"] == json::array({third}));
}
