// GET /v1/jobs?state=…: pages of jobs by state, in the contract's order across every shard, with
// a cursor that keeps working while jobs come and go.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
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

// Every page of a listing, following next_cursor; the ids in the order listed.
std::vector<json> all_pages(const HttpClient& http, const std::string& query, int limit,
                            int* pages = nullptr) {
  std::vector<json> jobs;
  std::string cursor;
  int count = 0;
  for (;;) {
    std::string target = "/v1/jobs?" + query + "&limit=" + std::to_string(limit);
    if (!cursor.empty()) target += "&cursor=" + cursor;
    auto res = http.get(target);
    REQUIRE(res.status == 200);
    const json page = res.value();
    REQUIRE(page["jobs"].size() <= static_cast<std::size_t>(limit));
    for (const json& j : page["jobs"]) jobs.push_back(j);
    ++count;
    if (page["next_cursor"].is_null()) break;
    cursor = page["next_cursor"].get<std::string>();
    REQUIRE(count < 1000);
  }
  if (pages != nullptr) *pages = count;
  return jobs;
}

std::vector<std::string> ids(const std::vector<json>& jobs) {
  std::vector<std::string> out;
  for (const json& j : jobs) out.push_back(j["id"]);
  return out;
}

}  // namespace

TEST_CASE("queued jobs are listed in the order they would be chosen, across shards, page by page",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});  // round robin over 4 shards: the pushes spread over them
  auto http = daemon.http();
  // Priorities 3, 1, 2 in turn, two names: the listing is priority first, then push order.
  std::vector<std::string> by_priority[4];
  for (int i = 0; i < 45; ++i) {
    const int priority = 1 + (i * 2) % 3;  // 1, 3, 2, 1, 3, 2, ...
    const std::string name = i % 2 == 0 ? "browse.a" : "browse.b";
    by_priority[priority].push_back(
        push(http, {{"name", name}, {"priority", priority}, {"argument", {{"i", i}}}}));
  }
  std::vector<std::string> expected;
  for (int p = 1; p <= 3; ++p) {
    expected.insert(expected.end(), by_priority[p].begin(), by_priority[p].end());
  }

  int pages = 0;
  const std::vector<json> listed = all_pages(http, "state=queued", 7, &pages);
  CHECK(ids(listed) == expected);
  CHECK(pages == 7);  // 45 jobs, 7 a page: the last page is not followed by an empty one
  CHECK(listed.front()["state"] == "queued");
  CHECK(listed.front()["priority"] == 1);
  CHECK(listed.front()["argument"] == json{{"i", 0}});

  // One name only, and the default state is queued.
  const std::vector<json> only_b = all_pages(http, "name=browse.b", 100);
  CHECK(only_b.size() == 22);
  for (const json& j : only_b) CHECK(j["name"] == "browse.b");

  // A cancelled job disappears from the listing; the others keep their places.
  REQUIRE(http.del("/v1/jobs/" + expected[1]).status == 204);
  expected.erase(expected.begin() + 1);
  CHECK(ids(all_pages(http, "state=queued", 10)) == expected);
}

TEST_CASE("a cursor stays usable while jobs are taken", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  std::vector<std::string> pushed;
  for (int i = 0; i < 30; ++i) pushed.push_back(push(http, {{"name", "browse.c"}}));
  auto first = http.get("/v1/jobs?state=queued&limit=10").value();
  REQUIRE(first["jobs"].size() == 10);
  const std::string cursor = first["next_cursor"];

  // A worker takes some of the jobs of the first page meanwhile.
  Worker worker;
  register_worker(http, worker, {"browse.c"}, 4);
  REQUIRE(wait_until([&] { return http.get("/v1/stats").value()["succeeded"] == 30; }, 10s));
  // Five more of a name no worker takes, so they stay queued.
  for (int i = 0; i < 5; ++i) pushed.push_back(push(http, {{"name", "browse.idle"}}));
  auto second = http.get("/v1/jobs?state=queued&limit=10&cursor=" + cursor);
  REQUIRE(second.status == 200);
  // Only jobs pushed after the cursor's job can be after it: the five new ones.
  CHECK(ids(second.value()["jobs"].get<std::vector<json>>()) ==
        std::vector<std::string>(pushed.end() - 5, pushed.end()));
}

TEST_CASE("scheduled jobs by due time, running jobs by deadline, dead jobs newest first",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, "retry:\n  base: 0.05\n  max: 0.1\n  jitter: 0\n"});
  auto http = daemon.http();
  const std::string later = push(http, {{"name", "browse.s"}, {"delay", 300}});
  const std::string sooner = push(http, {{"name", "browse.s"}, {"delay", 100}});
  const std::string soonest = push(http, {{"name", "browse.s"}, {"delay", 200}, {"priority", -5}});
  CHECK(ids(all_pages(http, "state=scheduled", 2)) ==
        std::vector<std::string>{sooner, soonest, later});
  const json first = all_pages(http, "state=scheduled", 10).front();
  CHECK(first["state"] == "scheduled");
  CHECK(first.contains("ready_at"));

  Worker worker;
  register_worker(http, worker, {"browse.run", "browse.dead"}, 8);
  const std::string long_one =
      push(http, {{"name", "browse.run"}, {"timeout", 60}, {"argument", {{"sleep_ms", 30000}}}});
  const std::string short_one =
      push(http, {{"name", "browse.run"}, {"timeout", 30}, {"argument", {{"sleep_ms", 30000}}}});
  REQUIRE(wait_until([&] { return all_pages(http, "state=running", 10).size() == 2; }, 10s));
  CHECK(ids(all_pages(http, "state=running", 1)) == std::vector<std::string>{short_one, long_one});

  std::vector<std::string> dead;
  for (int i = 0; i < 3; ++i) {
    const std::string id =
        push(http, {{"name", "browse.dead"}, {"max_retry", 0}, {"argument", {{"fail", true}}}});
    REQUIRE(wait_until([&] { return http.get("/v1/jobs/" + id).value()["state"] == "dead"; }, 10s));
    dead.insert(dead.begin(), id);  // newest first
  }
  const std::vector<json> listed_dead = all_pages(http, "state=dead", 2);
  CHECK(ids(listed_dead) == dead);
  CHECK(listed_dead.front()["state"] == "dead");
  CHECK(listed_dead.front()["last_error"].is_string());
}

// A shard's page looks at about 10,000 entries at most. One that runs out first ends the page
// where it stopped (short, even empty) and the next page goes on from there: before, the page
// said it was the last, or listed later jobs of other names in place of the ones not looked at.
TEST_CASE("a page whose scan ran out of budget ends there, and the next goes on: none skipped",
          "[http]") {
  RedisServer redis;
  Daemon daemon({.redis_url = redis.url(), .shards = 1});
  auto http = daemon.http();
  const auto push_many = [&](const std::string& name, int n, json extra) {
    std::vector<std::string> ids;
    for (int done = 0; done < n;) {
      json batch = json::array();
      for (; done < n && batch.size() < 1000; ++done) {
        json job = extra;
        job["name"] = name;
        batch.push_back(job);
      }
      auto res = http.post("/v1/jobs", batch);
      REQUIRE(res.status == 201);
      const json body = res.value();
      for (const json& id : body["ids"]) ids.push_back(id);
    }
    return ids;
  };
  SECTION("scheduled, one name among many entries of another") {
    push_many("other", 10'050, {{"delay", 600}});
    const std::string rare = push(http, {{"name", "rare"}, {"delay", 1200}});
    int pages = 0;
    const auto listed = all_pages(http, "state=scheduled&name=rare", 10, &pages);
    CHECK(ids(listed) == std::vector<std::string>{rare});
    CHECK(pages == 2);  // the first came back empty, with a cursor
  }
  SECTION("queued, more names with more jobs (1001 each) than a page looks at") {
    // Pushed in turns, so that every name has jobs among the first page's.
    std::vector<std::string> expected;
    for (int turn = 0; turn < 13; ++turn) {
      for (int n = 0; n < 12; ++n) {
        const auto pushed = push_many("name" + std::to_string(n), 77, json::object());
        expected.insert(expected.end(), pushed.begin(), pushed.end());
      }
    }
    // Pushed last, listed first (its priority), whichever name a scan takes first.
    expected.insert(expected.begin(), push(http, {{"name", "urgent"}, {"priority", -1}}));
    const auto listed = ids(all_pages(http, "state=queued", 1000));
    CHECK(listed.size() == expected.size());
    // Where they part, if they do (the whole lists would be 12,013 ids in the message).
    const auto [at, _] =
        std::mismatch(listed.begin(), listed.end(), expected.begin(), expected.end());
    INFO("first difference at " << (at - listed.begin()) << ": "
                                << (at == listed.end() ? std::string("(end)") : *at));
    CHECK(at == listed.end());
  }
}

TEST_CASE("bad browse parameters are refused naming the parameter", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  const auto field_of = [&](const std::string& query) {
    auto res = http.get("/v1/jobs?" + query);
    CHECK(res.status == 400);
    return res.value()["field"].get<std::string>();
  };
  CHECK(field_of("state=finished") == "state");
  CHECK(field_of("limit=0") == "limit");
  CHECK(field_of("limit=1001") == "limit");
  CHECK(field_of("limit=nan") == "limit");
  CHECK(field_of("name=.bad") == "name");
  CHECK(field_of("cursor=garbage") == "cursor");
  CHECK(field_of("cursor=q.1.0.short") == "cursor");
  // A cursor of the dead listing cannot page the queued one.
  CHECK(field_of("state=queued&cursor=d.1764000000000.3.000000001") == "cursor");
  CHECK(http.get("/v1/jobs?state=dead&cursor=d.1764000000000.3.000000001").status == 200);
  // A bad percent escape is not taken as an absent parameter (the default state, any name, the
  // first page).
  CHECK(field_of("state=dead%") == "state");
  CHECK(field_of("name=mail%2") == "name");
  CHECK(field_of("cursor=q.0.0.%ZZ") == "cursor");
  auto dead = http.get("/v1/dead?name=a%G1");
  CHECK(dead.status == 400);
  CHECK(dead.value()["field"] == "name");
}
