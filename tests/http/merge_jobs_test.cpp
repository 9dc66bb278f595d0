// Merging duplicates end to end (contract: "Merging duplicates"): the daemon, a real Redis,
// one or two masters, and a worker that records what it is sent.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "tests/support/daemon.hpp"
#include "tests/support/job_calls.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/worker.hpp"

using namespace std::chrono_literals;
using jq::test::Daemon;
using jq::test::HttpClient;
using jq::test::RecordingWorker;
using jq::test::RedisServer;
using jq::test::wait_until;
using nlohmann::json;

namespace {

void register_recorder(const HttpClient& http, const RecordingWorker& worker, json names) {
  auto res = http.post("/v1/workers",
                       {{"url", worker.url()}, {"names", std::move(names)}, {"concurrency", 4}});
  REQUIRE(res.status == 201);
}

// The worker request bodies the recorder got, decoded.
std::vector<json> received(const RecordingWorker& worker) {
  std::vector<json> out;
  for (const auto& request : worker.requests()) out.push_back(json::from_msgpack(request.body));
  return out;
}

json job_of(const HttpClient& http, const std::string& id) {
  auto res = http.get("/v1/jobs/" + id);
  REQUIRE(res.status == 200);
  return res.value();
}

}  // namespace

TEST_CASE(
    "50 racing appends of one key from 10 connections over two masters make one job that "
    "holds every argument once",
    "[http]") {
  RedisServer redis;
  Daemon first({redis.url()});
  Daemon second({redis.url()});
  std::atomic<int> created{0}, merged{0}, other{0};
  std::mutex ids_mutex;
  std::set<std::string> ids;
  std::vector<std::thread> pushers;
  for (int c = 0; c < 10; ++c) {
    pushers.emplace_back([&, c] {
      HttpClient http = (c % 2 == 0 ? first : second).http();
      for (int i = 0; i < 5; ++i) {
        auto res = http.post("/v1/jobs", {{"name", "account.sync"},
                                          {"argument", {{"change", c * 5 + i}}},
                                          {"unique_key", "account-7"},
                                          {"on_duplicate", "append"}});
        if (res.status == 201) {
          ++created;
        } else if (res.status == 200 && res.value()["duplicate"] == true &&
                   res.value()["merged"] == true) {
          ++merged;
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
  CHECK(merged == 49);
  CHECK(other == 0);
  REQUIRE(ids.size() == 1);
  CHECK(first.http().get("/v1/stats").value()["pushed"] == 1);

  RecordingWorker worker;
  register_recorder(first.http(), worker, {"account.sync"});
  REQUIRE(wait_until([&] { return worker.requests().size() == 1; }, 10s));
  const json job = received(worker).front();
  CHECK(job["id"] == *ids.begin());
  REQUIRE(job["argument"].is_array());
  std::vector<int> changes;
  for (const json& element : job["argument"]) changes.push_back(element["change"]);
  std::sort(changes.begin(), changes.end());
  std::vector<int> all(50);
  for (int i = 0; i < 50; ++i) all[i] = i;
  CHECK(changes == all);  // each once, none lost
}

TEST_CASE("replace with a delay debounces: one run, with the last argument, after the last push",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  const json first = {
      {"name", "search.reindex"}, {"argument", {{"rev", 1}}}, {"priority", 5}, {"delay", 30},
      {"unique_key", "doc-9"},    {"on_duplicate", "replace"}};
  auto pushed = http.post("/v1/jobs", first);
  REQUIRE(pushed.status == 201);
  const std::string id = pushed.value()["id"];
  const std::string due_before = job_of(http, id)["ready_at"];

  json again = first;
  again["argument"] = {{"rev", 2}};
  again["delay"] = 0.3;
  again.erase("priority");
  auto merged = http.post("/v1/jobs", again);
  CHECK(merged.status == 200);
  CHECK(merged.value() == json{{"id", id}, {"duplicate", true}, {"merged", true}});
  const json job = job_of(http, id);
  CHECK(job["state"] == "scheduled");
  CHECK(job["priority"] == 0);  // the default: the push gave none
  CHECK(job["ready_at"] < due_before);
  const json page = http.get("/v1/jobs?state=scheduled").value();
  REQUIRE(page["jobs"].size() == 1);
  CHECK(page["jobs"][0]["argument"] == json{{"rev", 2}});

  RecordingWorker worker;
  register_recorder(http, worker, {"search.reindex"});
  REQUIRE(wait_until([&] { return worker.requests().size() == 1; }, 10s));
  CHECK(received(worker).front()["argument"] == json{{"rev", 2}});
  // The claim ended when it started: a push now makes a new job.
  CHECK(http.post("/v1/jobs", again).status == 201);
}

TEST_CASE("a replace whose run_at is at or before 1970 makes a scheduled job ready now", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  const std::string id = jq::test::push(
      http, {{"name", "later"}, {"unique_key", "k"}, {"on_duplicate", "replace"}, {"delay", 3600}});
  REQUIRE(job_of(http, id)["state"] == "scheduled");
  const std::string past = GENERATE("1970-01-01T00:00:00Z", "1969-07-20T20:17:00Z");
  auto merged = http.post(
      "/v1/jobs",
      {{"name", "later"}, {"unique_key", "k"}, {"on_duplicate", "replace"}, {"run_at", past}});
  REQUIRE(merged.status == 200);
  CHECK(merged.value()["merged"] == true);
  CHECK(job_of(http, id)["state"] == "queued");
}

TEST_CASE("a batch lists merged jobs among its duplicates, and as merged", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  const json entity = {{"name", "sync"}, {"unique_key", "e1"}, {"on_duplicate", "append"}};
  json a = entity, b = entity, kept = entity, plain = {{"name", "sync"}};
  a["argument"] = "a";
  b["argument"] = "b";
  kept["on_duplicate"] = "keep";
  auto res = http.post("/v1/jobs", json::array({a, plain, b, kept}));
  REQUIRE(res.status == 201);
  const json body = res.value();
  CHECK(body["duplicates"] == json::array({2, 3}));
  CHECK(body["merged"] == json::array({2}));
  CHECK(body["ids"][2] == body["ids"][0]);
  CHECK(body["ids"][3] == body["ids"][0]);
  const json page = http.get("/v1/jobs?state=queued&name=sync").value();
  std::vector<json> arguments;
  for (const json& job : page["jobs"]) arguments.push_back(job["argument"]);
  CHECK(std::count(arguments.begin(), arguments.end(), json::array({"a", "b"})) == 1);
}

TEST_CASE("a merged job is matched against the constraints again with its new argument", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  auto created = http.post(
      "/v1/constraints",
      {{"name", "frozen-tenant"},
       {"match",
        {{"name", "invoice"}, {"argument", json::array({{{"path", "/tenant"}, {"equals", "a"}}})}}},
       {"paused", true}});
  REQUIRE(created.status == 201);
  // Pushes are matched against the master's snapshot of the constraints: wait for its reload.
  REQUIRE(daemon.logged("constraints: 1 loaded", 5s));
  const json job = {{"name", "invoice"},
                    {"argument", {{"tenant", "a"}}},
                    {"unique_key", "invoice-1"},
                    {"on_duplicate", "replace"}};
  const std::string id = jq::test::push(http, job);
  RecordingWorker worker;
  register_recorder(http, worker, {"invoice"});
  REQUIRE(
      wait_until([&] { return job_of(http, id).value("blocked_by", "") == "frozen-tenant"; }, 10s));
  CHECK(worker.requests().empty());

  json moved = job;
  moved["argument"] = {{"tenant", "b"}};
  CHECK(http.post("/v1/jobs", moved).status == 200);
  REQUIRE(wait_until([&] { return worker.requests().size() == 1; }, 10s));
  CHECK(received(worker).front()["argument"] == json{{"tenant", "b"}});
}

TEST_CASE("merging options that do not go together are refused naming the field", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  auto finished = http.post("/v1/jobs", {{"name", "a"},
                                         {"unique_key", "k"},
                                         {"unique_until", "finished"},
                                         {"on_duplicate", "append"}});
  CHECK(finished.status == 400);
  CHECK(finished.value()["field"] == "unique_until");
  auto alone = http.post("/v1/jobs", {{"name", "a"}, {"on_duplicate", "replace"}});
  CHECK(alone.status == 400);
  CHECK(alone.value()["field"] == "on_duplicate");
  CHECK(http.get("/v1/stats").value()["pushed"] == 0);
}
