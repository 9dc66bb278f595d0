// Recurring schedules end to end (contract: "Recurring jobs (schedules)"): real Redis, real
// masters (two for exactly-once, one stopped across ticks for `missed`), real workers. Timetables
// are `every` 1-2 s or 6-field crons so the tests stay short; where ticks must pass while no
// master runs, the test waits for that time, since there is nothing else to wait for.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <thread>

#include "api/timestamp.hpp"
#include "src/util/time.hpp"
#include "tests/support/daemon.hpp"
#include "tests/support/job_calls.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/worker.hpp"

using namespace std::chrono_literals;
using jq::test::Daemon;
using jq::test::HttpClient;
using jq::test::RecordingWorker;
using jq::test::RedisServer;
using jq::test::register_worker;
using jq::test::wait_until;
using jq::test::Worker;
using nlohmann::json;

namespace {

// A tick made later than this after its time has certainly been missed (> 1 s), with margin.
constexpr std::int64_t kMissedAfterMs = 1500;

std::int64_t ms_of(const json& iso) {
  auto ms = jq::api::parse_timestamp_ms(iso.get<std::string>());
  REQUIRE(ms);
  return *ms;
}

std::int64_t now_ms() {
  return jq::epoch_ms(std::chrono::system_clock::now());
}

json create(const HttpClient& http, const json& schedule) {
  auto res = http.post("/v1/schedules", schedule);
  INFO(res.body);
  REQUIRE(res.status == 201);
  return res.value();
}

json get(const HttpClient& http, const std::string& name) {
  auto res = http.get("/v1/schedules/" + name);
  INFO(res.body);
  REQUIRE(res.status == 200);
  return res.value();
}

jq::test::HttpResult patch(const HttpClient& http, const std::string& name, const json& body) {
  return http.request("PATCH", "/v1/schedules/" + name, body.dump(),
                      {{"Content-Type", "application/json"}});
}

// The queued jobs of a name (no worker takes them), through the job browser.
std::vector<json> queued(const HttpClient& http, const std::string& name) {
  auto res = http.get("/v1/jobs?state=queued&limit=1000&name=" + name);
  REQUIRE(res.status == 200);
  return res.value()["jobs"].get<std::vector<json>>();
}

}  // namespace

TEST_CASE("each tick makes exactly one job across two masters, within 100 ms of the tick",
          "[http]") {
  RedisServer redis;
  Daemon first({redis.url()});
  Daemon second({redis.url()});
  create(first.http(),
         {{"name", "every-second"}, {"every", 1}, {"job", {{"name", "tick"}, {"priority", 3}}}});
  REQUIRE(wait_until([&] { return get(second.http(), "every-second")["runs"] >= 4; }, 10s));
  const auto jobs = queued(first.http(), "tick");
  const json s = get(first.http(), "every-second");
  CHECK(jobs.size() >= 4);
  CHECK(jobs.size() == s["runs"].get<std::size_t>());
  std::set<std::int64_t> ticks;
  for (const json& job : jobs) {
    INFO(job.dump());
    CHECK(job["schedule"] == "every-second");
    CHECK(job["priority"] == 3);
    const std::int64_t tick = ms_of(job["scheduled_at"]);
    CHECK(ticks.insert(tick).second);  // one job per tick
    const std::int64_t late = ms_of(job["enqueued_at"]) - tick;
    CHECK(late >= 0);
    CHECK(late < 100);
  }
  CHECK(s["missed_count"] == 0);
}

TEST_CASE("a change on one master wakes the other", "[http]") {
  RedisServer redis;
  Daemon first({redis.url()});
  Daemon second({redis.url()});
  create(first.http(), {{"name", "woken"}, {"every", 3600}, {"job", {{"name", "woke"}}}});
  REQUIRE(patch(first.http(), "woken", {{"every", 1}}).status == 200);
  // Only the second master is left: it slept until an hour from now unless the change woke it.
  REQUIRE(first.stop(SIGTERM, 10s) == 0);
  const std::int64_t stopped = now_ms();
  const auto made_since = [&] {
    for (const json& job : queued(second.http(), "woke")) {
      if (ms_of(job["scheduled_at"]) > stopped) return job;
    }
    return json();
  };
  REQUIRE(wait_until([&] { return !made_since().is_null(); }, 5s));
  const json job = made_since();
  CHECK(ms_of(job["enqueued_at"]) - ms_of(job["scheduled_at"]) < 100);
}

TEST_CASE(
    "ticks that passed while no master ran: run_once makes one job for the latest, skip "
    "none",
    "[http]") {
  const bool run_once = GENERATE(true, false);
  RedisServer redis;
  std::optional<Daemon> master(jq::test::DaemonOptions{redis.url()});
  // Three ticks, 2, 3 and 4 s from now, all while the master is stopped.
  const std::int64_t start = now_ms() + 2000;
  create(master->http(), {{"name", "while-down"},
                          {"every", 1},
                          {"start_at", jq::iso8601_utc(start)},
                          {"end_at", jq::iso8601_utc(start + 2000)},
                          {"missed", run_once ? "run_once" : "skip"},
                          {"job", {{"name", "late"}}}});
  REQUIRE(master->stop(SIGTERM, 10s) == 0);
  master.reset();
  std::this_thread::sleep_until(std::chrono::system_clock::time_point(
      std::chrono::milliseconds(start + 2000 + kMissedAfterMs)));
  master.emplace(jq::test::DaemonOptions{redis.url()});
  auto http = master->http();
  REQUIRE(wait_until([&] { return get(http, "while-down")["missed_count"] != 0; }, 5s));
  const json s = get(http, "while-down");
  const auto jobs = queued(http, "late");
  CHECK(s["next_run_at"].is_null());  // ended
  if (run_once) {
    CHECK(s["runs"] == 1);
    CHECK(s["missed_count"] == 2);
    REQUIRE(jobs.size() == 1);
    CHECK(ms_of(jobs[0]["scheduled_at"]) == start + 2000);
  } else {
    CHECK(s["runs"] == 0);
    CHECK(s["missed_count"] == 3);
    CHECK(jobs.empty());
  }
}

TEST_CASE("ticks due together are all made on time even when claiming them takes longer than 1 s",
          "[http]") {
  // 80 schedules (more than the runner claims at once) with missed: skip, all due at one
  // instant, and Redis stopped across it for 2.5 s: the master found every tick due on time, so
  // none is missed, however long its own claims took. Claimed one after another, each after the
  // one before had its answer, all but the first counted as missed. A schedule every second
  // among them has ticks that fell due while Redis was stopped, found late: those are missed.
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  constexpr int kSchedules = 80;
  const std::int64_t at = now_ms() + 3000;
  for (int i = 0; i < kSchedules; ++i) {
    create(http, {{"name", "burst-" + std::to_string(i)},
                  {"every", 3600},
                  {"start_at", jq::iso8601_utc(at)},
                  {"missed", "skip"},
                  {"job", {{"name", "burst"}}}});
  }
  create(http, {{"name", "steady"},
                {"every", 1},
                {"start_at", jq::iso8601_utc(at)},
                {"missed", "skip"},
                {"job", {{"name", "steady"}}}});
  REQUIRE(now_ms() < at - 300);  // created in time, or the test says nothing
  std::this_thread::sleep_until(
      std::chrono::system_clock::time_point(std::chrono::milliseconds(at - 100)));
  redis.freeze();
  std::this_thread::sleep_for(2500ms);
  redis.thaw();
  REQUIRE(wait_until([&] { return queued(http, "burst").size() == kSchedules; }, 10s));
  for (int i = 0; i < kSchedules; ++i) {
    const json s = get(http, "burst-" + std::to_string(i));
    INFO(s.dump());
    CHECK(s["runs"] == 1);
    CHECK(s["missed_count"] == 0);
  }
  REQUIRE(wait_until([&] { return get(http, "steady")["missed_count"] >= 1; }, 5s));
}

TEST_CASE("overlap skip makes no job while the previous one runs, and counts the skipped ticks",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  Worker worker;
  register_worker(http, worker, {"slow"}, 10);
  create(http, {{"name", "no-overlap"},
                {"every", 1},
                {"overlap", "skip"},
                {"job", {{"name", "slow"}, {"argument", {{"sleep_ms", 2500}}}}}});
  REQUIRE(wait_until([&] { return get(http, "no-overlap")["skipped"] >= 2; }, 10s));
  REQUIRE(wait_until([&] { return get(http, "no-overlap")["runs"] >= 2; }, 10s));
  CHECK(worker.stats()["max_in_flight"] == 1);
  const std::string metrics = http.get("/metrics").body;
  CHECK_THAT(metrics, Catch::Contains(
                          "jq_schedule_skipped_total{schedule=\"no-overlap\",reason=\"overlap\"}"));
}

TEST_CASE("a paused schedule makes no jobs and misses nothing, resumed, it goes on from now",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  create(http, {{"name", "pausable"}, {"every", 1}, {"job", {{"name", "p"}}}});
  REQUIRE(wait_until([&] { return get(http, "pausable")["runs"] >= 1; }, 5s));
  auto paused = patch(http, "pausable", {{"paused", true}});
  REQUIRE(paused.status == 200);
  CHECK(paused.value()["next_run_at"].is_null());
  const json before = get(http, "pausable");
  std::this_thread::sleep_for(2500ms);  // ticks would come and go meanwhile
  CHECK(get(http, "pausable")["runs"] == before["runs"]);

  // Run now works while paused and leaves the timetable alone.
  auto ran = http.post("/v1/schedules/pausable/run", json::object());
  REQUIRE(ran.status == 201);
  const json job = http.get("/v1/jobs/" + ran.value()["id"].get<std::string>()).value();
  CHECK(job["schedule"] == "pausable");
  CHECK(std::abs(ms_of(job["scheduled_at"]) - now_ms()) < 5000);
  CHECK(get(http, "pausable")["next_run_at"].is_null());

  auto resumed = patch(http, "pausable", {{"paused", false}});
  REQUIRE(resumed.status == 200);
  CHECK(ms_of(resumed.value()["next_run_at"]) - now_ms() <= 1000);
  const std::int64_t runs = resumed.value()["runs"];
  REQUIRE(wait_until([&] { return get(http, "pausable")["runs"] > runs; }, 5s));
  CHECK(get(http, "pausable")["missed_count"] == 0);
}

TEST_CASE("a preview shows what a timetable does across daylight saving changes", "[http]") {
  Daemon daemon({});
  auto res = daemon.http().post("/v1/schedules/preview", {{"cron", "30 2 * * *"},
                                                          {"timezone", "Europe/Berlin"},
                                                          {"from", "2026-03-28T00:00:00Z"},
                                                          {"count", 3}});
  INFO(res.body);
  REQUIRE(res.status == 200);
  CHECK(res.value()["runs"] ==
        json::array({"2026-03-28T02:30:00+01:00", "2026-03-29T03:00:00+02:00",
                     "2026-03-30T02:30:00+02:00"}));
  res = daemon.http().post("/v1/schedules/preview", {{"cron", "30 2 * * *"},
                                                     {"timezone", "Europe/Berlin"},
                                                     {"from", "2026-10-24T12:00:00Z"},
                                                     {"count", 2}});
  CHECK(res.value()["runs"] ==
        json::array({"2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"}));
  res = daemon.http().post("/v1/schedules/preview", {{"cron", "30 25 * * *"}});
  CHECK(res.status == 400);
  CHECK(res.value()["field"] == "cron");
}

TEST_CASE("schedules are created, read, replaced, patched and deleted, bad fields are named",
          "[http]") {
  Daemon daemon({});
  auto http = daemon.http();
  const json created = create(http, {{"name", "nightly"},
                                     {"cron", "30 2 * * *"},
                                     {"timezone", "America/New_York"},
                                     {"job", {{"name", "report.build"}, {"timeout", 600}}}});
  CHECK(created["timezone"] == "America/New_York");
  CHECK(created["next_runs"].size() == 5);
  CHECK(created["next_run_at"].get<std::string>().ends_with(":00"));
  CHECK(created["runs"] == 0);
  CHECK(created["last_run_at"].is_null());
  CHECK(http.post("/v1/schedules", created).status == 409);

  // What GET answers can be PUT back as it is.
  json read = get(http, "nightly");
  auto put = http.request("PUT", "/v1/schedules/nightly", read.dump(),
                          {{"Content-Type", "application/json"}});
  INFO(put.body);
  CHECK(put.status == 200);
  CHECK(put.value()["cron"] == "30 2 * * *");

  auto patched = patch(http, "nightly", {{"every", 3600}});
  REQUIRE(patched.status == 200);
  CHECK(patched.value()["cron"].is_null());
  CHECK(patch(http, "nope", {{"every", 5}}).status == 404);
  CHECK(http.get("/v1/schedules").value().size() == 1);

  auto bad = http.post("/v1/schedules",
                       {{"name", "b"}, {"cron", "0 2 * * mon-xyz"}, {"job", {{"name", "x"}}}});
  CHECK(bad.status == 400);
  CHECK(bad.value()["field"] == "cron");
  bad = http.post(
      "/v1/schedules",
      {{"name", "b"}, {"every", 5}, {"timezone", "Nowhere/City"}, {"job", {{"name", "x"}}}});
  CHECK(bad.value()["field"] == "timezone");
  bad = http.post("/v1/schedules",
                  {{"name", "b"}, {"every", 5}, {"job", {{"name", "x"}, {"priority", 1.5}}}});
  CHECK(bad.value()["field"] == "job.priority");
  bad = http.post("/v1/schedules", {{"name", "b"}, {"job", {{"name", "x"}}}});
  CHECK(bad.value()["field"] == "cron");
  auto backwards = patch(
      http, "nightly", {{"start_at", "2026-12-02T00:00:00Z"}, {"end_at", "2026-12-01T00:00:00Z"}});
  CHECK(backwards.status == 400);
  CHECK(backwards.value()["field"] == "end_at");

  CHECK(http.del("/v1/schedules/nightly").status == 204);
  CHECK(http.get("/v1/schedules/nightly").status == 404);
  CHECK(http.del("/v1/schedules/nightly").status == 404);
  CHECK(http.post("/v1/schedules/nightly/run", json::object()).status == 404);
}

TEST_CASE("a schedule stored with a definition this master cannot read can still be deleted",
          "[http]") {
  // E.g. a time zone that a master with an older tz database does not know.
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  create(http, {{"name", "zoned"},
                {"cron", "0 * * * *"},
                {"timezone", "Europe/Paris"},
                {"job", {{"name", "report.build"}}}});
  jq::test::SyncRedis r(redis.port());
  bool rewritten = false;
  for (const auto& key : r.call({"KEYS", "*:schedules"}).elements) {
    std::string stored = r.call({"HGET", key.str, "zoned"}).str;
    const auto at = stored.find("Europe/Paris");
    if (at == std::string::npos) continue;
    stored.replace(at, 12, "Mars/Olympus");  // the same length: the record stays well formed
    r.call({"HSET", key.str, "zoned", stored});
    rewritten = true;
  }
  REQUIRE(rewritten);
  auto read = http.get("/v1/schedules/zoned");
  CHECK(read.status == 500);
  CHECK_THAT(read.body, Catch::Contains("DELETE /v1/schedules/zoned removes it"));
  CHECK(http.del("/v1/schedules/zoned").status == 204);
  CHECK(http.get("/v1/schedules/zoned").status == 404);
  CHECK(http.get("/v1/schedules").value().empty());
}

TEST_CASE("the worker gets schedule and scheduled_at with the offset of the schedule's zone",
          "[http]") {
  Daemon daemon({});
  auto http = daemon.http();
  RecordingWorker worker;
  REQUIRE(
      http.post("/v1/workers", {{"url", worker.url()}, {"names", json::array({"zoned"})}}).status ==
      201);
  create(http, {{"name", "zoned"},
                {"cron", "* * * * * *"},
                {"timezone", "Asia/Kolkata"},
                {"job", {{"name", "zoned"}}}});
  REQUIRE(wait_until([&] { return !worker.requests().empty(); }, 5s));
  const json body = json::from_msgpack(worker.requests().front().body);
  CHECK(body["schedule"] == "zoned");
  CHECK(body["scheduled_at"].get<std::string>().ends_with("+05:30"));
  const std::string metrics = http.get("/metrics").body;
  CHECK_THAT(metrics,
             Catch::Contains("jq_schedule_runs_total{schedule=\"zoned\"}") &&
                 Catch::Contains("jq_schedule_next_run_timestamp_seconds{schedule=\"zoned\"}"));
}

TEST_CASE("schedules in the config are applied at start, a bad one stops the start naming it",
          "[http]") {
  Daemon daemon({.extra_yaml = "schedules:\n"
                               "  - name: from-config\n"
                               "    cron: \"0 3 * * *\"\n"
                               "    timezone: Europe/Berlin\n"
                               "    job: {name: cleanup}\n"});
  REQUIRE(
      wait_until([&] { return daemon.http().get("/v1/schedules/from-config").status == 200; }, 5s));
  CHECK(get(daemon.http(), "from-config")["timezone"] == "Europe/Berlin");

  jq::test::TempDir dir;
  const std::string config = dir.file("bad.yaml");
  std::ofstream(config) << "schedules:\n  - {name: x, cron: \"61 * * * *\", job: {name: y}}\n";
  const auto result = jq::test::run_master({"--config", config});
  CHECK(result.exit_code == 2);
  CHECK_THAT(result.output, Catch::Contains("schedules[0].cron"));
}
