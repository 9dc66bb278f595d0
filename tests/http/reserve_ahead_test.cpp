// Jobs reserved ahead of a busy endpoint (dispatch.reserve_ahead): the real daemon, a real
// Redis, a real jqworker. While both of its slots run a long job, the two jobs behind them are
// reserved for it already (GET shows them running, the worker has not seen them); they start as
// the slots free, and go back to their queue, their attempt not counted, whenever they will not
// run there. Every job keeps its result, so that GET still shows it once it succeeded.
#include <catch2/catch.hpp>

#include <csignal>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/daemon.hpp"
#include "tests/support/job_calls.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/worker.hpp"

using namespace std::chrono_literals;
using jq::test::Daemon;
using jq::test::DaemonOptions;
using jq::test::HttpClient;
using jq::test::push;
using jq::test::RedisServer;
using jq::test::wait_until;
using jq::test::Worker;
using nlohmann::json;

namespace {

json job(const HttpClient& http, const std::string& id) {
  return http.get("/v1/jobs/" + id).value();
}

bool all_in(const HttpClient& http, const std::vector<std::string>& ids, const std::string& state,
            int attempts) {
  for (const auto& id : ids) {
    const json j = job(http, id);
    if (j["state"] != state || j["attempts"] != attempts) return false;
  }
  return true;
}

// jq_worker_reserved_ahead of the endpoint at `url`, as GET /metrics shows it; -1 without one.
double reserved_ahead(const HttpClient& http, const std::string& url) {
  const std::string text = http.get("/metrics").body;
  const std::string key = "jq_worker_reserved_ahead{worker=\"" + url + "\"} ";
  const auto at = text.find(key);
  return at == std::string::npos ? -1 : std::stod(text.substr(at + key.size()));
}

// One jqworker of concurrency 2 for "n" that has answered a first job (its pace is known), two
// jobs holding both of its slots (2.5 s and 5 s, so that one slot frees well before the other),
// and two more behind them: the first of those with `first_behind` as its argument. The window
// is 1 s, so that a slow first answer on a loaded machine still leaves room for both.
// `more_config` is added to the daemon's config.
struct BusyEndpoint {
  explicit BusyEndpoint(const json& first_behind = json::object(),
                        std::optional<double> first_behind_timeout = std::nullopt,
                        const std::string& window = "1", const std::string& more_config = "")
      : daemon{DaemonOptions{redis.url(), 4,
                             "dispatch:\n  reserve_ahead: " + window + "\n" + more_config}} {
    jq::test::register_worker(http, worker, {"n"}, 2);
    const std::string first = push(http, {{"name", "n"}, {"keep_result", true}});
    REQUIRE(wait_until([&] { return job(http, first)["state"] == "succeeded"; }, 10s));
    for (int ms : {2500, 5000}) {
      running.push_back(
          push(http, {{"name", "n"}, {"argument", {{"sleep_ms", ms}}}, {"keep_result", true}}));
    }
    json first_job = {{"name", "n"}, {"argument", first_behind}, {"keep_result", true}};
    if (first_behind_timeout) first_job["timeout"] = *first_behind_timeout;
    behind.push_back(push(http, first_job));
    behind.push_back(push(http, {{"name", "n"}, {"keep_result", true}}));
  }
  // Reserved for the worker before it has a free slot: running, their attempt counted, and not
  // sent (the worker has the first job and the two long ones). The second long job's request
  // may still be on its way when they are reserved: the master counts a slot taken before the
  // worker reads the request.
  void wait_reserved_ahead() {
    REQUIRE(wait_until([&] { return all_in(http, behind, "running", 1); }, 1500ms));
    REQUIRE(wait_until([&] { return worker.stats()["received"] >= 3; }, 2s));
    CHECK(worker.stats()["received"] == 3);
    CHECK(all_in(http, running, "running", 1));
  }
  RedisServer redis;
  Daemon daemon;
  HttpClient http{daemon.http()};
  Worker worker;
  std::vector<std::string> running;
  std::vector<std::string> behind;
};

}  // namespace

TEST_CASE("jobs behind a busy endpoint are reserved ahead and start as its slots free", "[http]") {
  BusyEndpoint e;
  e.wait_reserved_ahead();
  CHECK(reserved_ahead(e.http, e.worker.url()) == 2);
  REQUIRE(wait_until([&] { return all_in(e.http, e.behind, "succeeded", 1); }, 10s));
  CHECK(reserved_ahead(e.http, e.worker.url()) == 0);
  const json stats = e.worker.stats();
  CHECK(stats["received"] == 5);
  const auto order = stats["order"].get<std::vector<std::string>>();
  REQUIRE(order.size() == 5);
  CHECK(std::vector<std::string>(order.begin() + 3, order.end()) == e.behind);
  for (const auto& id : e.behind) CHECK(stats["by_job"][id] == json::array({1}));
}

TEST_CASE("jobs reserved ahead go back to their queue when their endpoint answers busy", "[http]") {
  // The first job behind answers 503 with a Retry-After of 30 s when the first slot frees: the
  // endpoint is held off, and the job reserved behind it goes back for others to run rather
  // than wait out the 30 s (the other slot still runs its long job).
  BusyEndpoint e({{"status", 503}, {"retry_after", 30}});
  e.wait_reserved_ahead();
  REQUIRE(wait_until([&] { return e.worker.stats()["received"] == 4; }, 5s));
  CHECK(wait_until([&] { return all_in(e.http, e.behind, "queued", 0); }, 5s));
  CHECK(e.worker.stats()["received"] == 4);
  CHECK(reserved_ahead(e.http, e.worker.url()) == 0);
}

TEST_CASE("jobs reserved ahead go back when their queue is paused, and wait for its resume",
          "[http]") {
  BusyEndpoint e;
  e.wait_reserved_ahead();
  auto paused = e.http.request("POST", "/v1/queues/n/pause", "", {{"Accept", "application/json"}});
  REQUIRE(paused.status == 200);
  // Back while both slots still run their long jobs: not left for a slot to free first.
  CHECK(wait_until([&] { return all_in(e.http, e.behind, "queued", 0); }, 1500ms));
  REQUIRE(wait_until([&] { return all_in(e.http, e.running, "succeeded", 1); }, 10s));
  CHECK(all_in(e.http, e.behind, "queued", 0));
  CHECK(e.worker.stats()["received"] == 3);
  e.http.request("POST", "/v1/queues/n/resume", "", {{"Accept", "application/json"}});
  CHECK(wait_until([&] { return all_in(e.http, e.behind, "succeeded", 1); }, 10s));
}

TEST_CASE("SIGTERM gives jobs reserved ahead back to their queue, their attempt not counted",
          "[http]") {
  BusyEndpoint e;
  e.wait_reserved_ahead();
  // The long jobs finish within shutdown_grace; the two behind them never start here.
  REQUIRE(e.daemon.stop(SIGTERM, 15s) == 0);
  CHECK(e.worker.stats()["received"] == 3);
  // The next master runs them, each as its first attempt: the one given back was not counted.
  Daemon next({e.redis.url()});
  const HttpClient http = next.http();
  CHECK(all_in(http, e.running, "succeeded", 1));
  REQUIRE(wait_until([&] { return all_in(http, e.behind, "succeeded", 1); }, 10s));
  const json by_job = e.worker.stats()["by_job"];
  for (const auto& id : e.behind) CHECK(by_job[id] == json::array({1}));
}

TEST_CASE("a job ahead goes back once half its timeout is gone, and runs later in full", "[http]") {
  // The first slot's job runs 2.5 s: the first job behind, with a timeout of 1 s, would have
  // timed out waiting for it. It goes back after 0.5 s, its attempt not counted, and runs once a
  // slot frees, with its whole timeout.
  BusyEndpoint e(json::object(), 1.0);
  e.wait_reserved_ahead();
  CHECK(wait_until([&] { return job(e.http, e.behind[0])["state"] == "queued"; }, 2s));
  CHECK(job(e.http, e.behind[0])["attempts"] == 0);
  CHECK(e.worker.stats()["received"] == 3);
  REQUIRE(wait_until([&] { return all_in(e.http, e.behind, "succeeded", 1); }, 10s));
  CHECK(e.worker.stats()["by_job"][e.behind[0]] == json::array({1}));
}

TEST_CASE("jobs ahead of attempts slower than their pace go back after four windows", "[http]") {
  // With the default window of 50 ms, the jobs behind the long ones are reserved ahead (the
  // first job took a few milliseconds: both of them, or one on a slow machine) and go back
  // 200 ms later, while both slots still run: the endpoint's pace misled.
  BusyEndpoint e(json::object(), std::nullopt, "0.05");
  REQUIRE(wait_until([&] { return all_in(e.http, {e.behind[0]}, "running", 1); }, 1500ms));
  CHECK(wait_until([&] { return all_in(e.http, e.behind, "queued", 0); }, 1500ms));
  CHECK(e.worker.stats()["received"] == 3);
  REQUIRE(wait_until([&] { return all_in(e.http, e.behind, "succeeded", 1); }, 10s));
}

TEST_CASE("jobs with constraints are not kept ahead of a busy endpoint", "[http]") {
  // A constraint counts a job as started when it is reserved, so a constrained job kept waiting
  // ahead would take a place its limit should give to a job that can run. Every job of "n"
  // matches one here (its limit of 10 never binds): the two behind the long ones are given
  // back at once and stay queued until a slot frees.
  BusyEndpoint e(json::object(), std::nullopt, "1",
                 "constraints:\n  - name: roomy\n    match: {name: n}\n    concurrency: 10\n");
  // The states of the jobs behind, read while the first long job (2.5 s) still ran: the last
  // such reading is from just before its slot freed.
  bool behind_queued = false;
  REQUIRE(wait_until(
      [&] {
        const bool queued = all_in(e.http, e.behind, "queued", 0);
        if (job(e.http, e.running[0])["state"] == "succeeded") return true;
        behind_queued = queued;
        return false;
      },
      10s));
  CHECK(behind_queued);
  CHECK(reserved_ahead(e.http, e.worker.url()) == 0);
  REQUIRE(wait_until([&] { return all_in(e.http, e.behind, "succeeded", 1); }, 10s));
  const json by_job = e.worker.stats()["by_job"];
  for (const auto& id : e.behind) CHECK(by_job[id] == json::array({1}));
}
