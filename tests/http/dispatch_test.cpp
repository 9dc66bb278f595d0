// Dispatch end to end: the real daemon, a real Redis, real jqworker servers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <climits>
#include <csignal>
#include <future>
#include <map>
#include <set>
#include <thread>

#include "src/util/time.hpp"
#include "tests/redis/script_test_support.hpp"
#include "tests/support/daemon.hpp"
#include "tests/support/full_listener.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/worker.hpp"

using namespace std::chrono_literals;
using jq::test::Daemon;
using jq::test::DaemonOptions;
using jq::test::HttpClient;
using jq::test::RedisServer;
using jq::test::wait_until;
using jq::test::Worker;
using nlohmann::json;

namespace {

// Fast retries so tests see several attempts quickly; no jitter so delays can be checked.
const std::string kFastRetry = "retry:\n  base: 0.05\n  max: 0.2\n  jitter: 0\n";

std::string register_worker(const HttpClient& http, const std::string& url, json names,
                            int concurrency, std::optional<double> ttl = std::nullopt) {
  json body = {{"url", url}, {"names", names}, {"concurrency", concurrency}};
  if (ttl) body["ttl"] = *ttl;
  auto res = http.post("/v1/workers", body);
  REQUIRE((res.status == 201 || res.status == 200));
  return res.value()["id"];
}

std::string push(const HttpClient& http, json job) {
  auto res = http.post("/v1/jobs", job);
  REQUIRE(res.status == 201);
  return res.value()["id"];
}

// A job that keeps its result and runs 300 ms on jqworker: long polls wait for it.
std::string push_kept_300ms(const HttpClient& http) {
  return push(http, {{"name", "n"}, {"argument", {{"sleep_ms", 300}}}, {"keep_result", true}});
}

// The job's final result (long polls until it is there), or null after `timeout`.
json result_of(const HttpClient& http, const std::string& id, std::chrono::seconds timeout = 20s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto res = http.get("/v1/jobs/" + id + "/result?wait=5");
    if (res.status == 200) return res.value();
  }
  return nullptr;
}

// Long polls for the job's successful result and returns how long after the worker answered
// (its finished_at, same machine clock) the answer came: storing it and waking the poll takes a
// few milliseconds, not a polling interval.
long long long_poll_delay_ms(const HttpClient& http, const std::string& id) {
  auto res = http.get("/v1/jobs/" + id + "/result?wait=10");
  const auto answered_ms = jq::epoch_ms(std::chrono::system_clock::now());
  REQUIRE(res.status == 200);
  json result = res.value();
  REQUIRE(result["type"] == "success");
  std::tm tm{};
  int millis = 0;
  const std::string at = result["finished_at"];
  REQUIRE(sscanf(at.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                 &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &millis) == 7);
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const long long finished_ms = static_cast<long long>(timegm(&tm)) * 1000 + millis;
  return answered_ms - finished_ms;
}

json job(const HttpClient& http, const std::string& id) {
  return http.get("/v1/jobs/" + id).value();
}

// Runs one job of `name` to success on a registered worker: the name is then known to the master,
// and the slot the job ran on stays with it for a while, so that the next push may skip the queue.
void run_first_job(const HttpClient& http, const std::string& name) {
  CHECK(result_of(http, push(http, {{"name", name}, {"keep_result", true}}))["type"] == "success");
}

// A master on a fresh Redis with one jqworker for `name` that has run a first job (run_first_job).
struct WarmWorker {
  explicit WarmWorker(const std::string& name, int concurrency = 4,
                      const std::string& extra_yaml = "")
      : daemon(DaemonOptions{redis.url(), 4, extra_yaml}), http(daemon.http()) {
    register_worker(http, worker.url(), {name}, concurrency);
    run_first_job(http, name);
  }
  RedisServer redis;
  Daemon daemon;
  HttpClient http;
  Worker worker;
};

// How many of the events published since the last take start with `prefix`.
int events_starting(jq::test::EventListener& events, jq::test::SyncRedis& r,
                    const std::string& prefix) {
  int n = 0;
  for (const std::string& m : events.take(r)) n += m.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("jobs run smallest priority first, ties in push order, extremes included", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  const std::vector<long long> priorities = {5, INT_MIN, 0, 0, INT_MAX, -3, 0};
  std::vector<std::string> ids;
  for (auto p : priorities) ids.push_back(push(http, {{"name", "order"}, {"priority", p}}));
  Worker worker;
  register_worker(http, worker.url(), {"order"},
                  1);  // one at a time: arrival order is choice order
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 7; }, 10s));
  const std::vector<std::string> expected = {ids[1], ids[5], ids[2], ids[3],
                                             ids[6], ids[0], ids[4]};
  CHECK(worker.stats()["order"].get<std::vector<std::string>>() == expected);
}

// Two endpoints of one name reserve from the same queues, one reservation of one may be on its
// way while the other chooses (QueueHeads' busy queues: unit tests), and neither may get a job
// that another queue's better one should go before. The queue is resumed once both are
// registered, so both take part from the first pass.
TEST_CASE("two endpoints reserving at once each get jobs smallest priority first", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});  // 4 shards, consecutive pushes in different shards
  auto http = daemon.http();
  const auto queue = [&](const std::string& verb) {
    return http.request("POST", "/v1/queues/pair/" + verb, "", {{"Accept", "application/json"}})
        .status;
  };
  REQUIRE(queue("pause") == 200);
  std::map<std::string, int> priority_of;
  for (int i = 0; i < 40; ++i) {
    const int priority = (i * 7) % 5;  // every priority in every shard, out of order
    const json job = {{"name", "pair"}, {"priority", priority}, {"argument", {{"sleep_ms", 10}}}};
    priority_of[push(http, job)] = priority;
  }
  Worker a;
  Worker b;
  register_worker(http, a.url(), {"pair"}, 1);  // one at a time: arrival order is choice order
  register_worker(http, b.url(), {"pair"}, 1);
  REQUIRE(queue("resume") == 200);
  REQUIRE(wait_until(
      [&] { return a.stats()["received"].get<int>() + b.stats()["received"].get<int>() == 40; },
      20s));
  std::set<std::string> seen;
  for (const Worker* w : {&a, &b}) {
    std::vector<int> priorities;
    for (const auto& id : w->stats()["order"].get<std::vector<std::string>>()) {
      CHECK(seen.insert(id).second);  // each job once
      priorities.push_back(priority_of.at(id));
    }
    CHECK(std::is_sorted(priorities.begin(), priorities.end()));
  }
  CHECK(seen.size() == 40);
}

// How many times Redis ran the script since the slow log was reset with every command logged.
int script_runs(jq::test::SyncRedis& r, jq::redis::ScriptId id) {
  const std::string& function = jq::redis::script(id).function;
  int runs = 0;
  for (const auto& entry : r.call({"SLOWLOG", "GET", "-1"}).elements) {
    if (entry.elements.size() < 4) continue;
    const auto& args = entry.elements[3].elements;
    runs += args.size() > 1 && args[1].str == function ? 1 : 0;
  }
  return runs;
}

// Replicas of one service, each registered as its own endpoint, all idle: a job announced was
// chosen by every one of them with a free slot, and a reservation of each went for it (a
// hundred reservations for one job with a hundred endpoints; docs/BENCHMARKS.md). Each job here
// has a unique key, so that it is queued and announced rather than taken at once.
TEST_CASE("a job for many idle endpoints of its name is reserved about once, not once each",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  Worker worker;
  for (int k = 0; k < 20; ++k) {
    register_worker(http, worker.url() + "/endpoint-" + std::to_string(k), {"herd"}, 1);
  }
  jq::test::SyncRedis r(redis.port());
  const int jobs = 40;
  for (int i = 0; i < jobs; ++i) {
    if (i == jobs / 4) {  // the endpoints that ran a job still hold their slot now
      r.call({"CONFIG", "SET", "slowlog-max-len", "100000"});
      r.call({"CONFIG", "SET", "slowlog-log-slower-than", "0"});
      r.call({"SLOWLOG", "RESET"});
    }
    const json job = {
        {"name", "herd"}, {"unique_key", "u" + std::to_string(i)}, {"keep_result", true}};
    REQUIRE(result_of(http, push(http, job))["type"] == "success");
  }
  const int reservations = script_runs(r, jq::redis::ScriptId::reserve_jobs);
  INFO("reservations for " << jobs - jobs / 4 << " jobs: " << reservations);
  CHECK(reservations > 0);  // the jobs went through the queue, as meant
  CHECK(reservations <= 2 * (jobs - jobs / 4));
}

TEST_CASE("jobs go only to endpoints registered for their name, or for *", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  Worker a, b;
  register_worker(http, a.url(), {"a"}, 4);
  register_worker(http, b.url(), {"b", "c"}, 4);
  std::set<std::string> a_ids, b_ids;
  for (int i = 0; i < 3; ++i) {
    a_ids.insert(push(http, {{"name", "a"}, {"keep_result", true}}));
    b_ids.insert(push(http, {{"name", "b"}, {"keep_result", true}}));
  }
  for (const auto& id : a_ids) CHECK(result_of(http, id)["type"] == "success");
  for (const auto& id : b_ids) CHECK(result_of(http, id)["type"] == "success");
  auto ids_seen = [](const Worker& w) {
    std::set<std::string> seen;
    const json stats = w.stats();
    for (const auto& [id, attempts] : stats["by_job"].items()) seen.insert(id);
    return seen;
  };
  CHECK(ids_seen(a) == a_ids);
  CHECK(ids_seen(b) == b_ids);

  Worker any;
  register_worker(http, any.url(), {"*"}, 2);
  const std::string other = push(http, {{"name", "zzz.other"}, {"keep_result", true}});
  CHECK(result_of(http, other)["type"] == "success");
  CHECK(any.stats()["by_job"].contains(other));
}

TEST_CASE("an endpoint's concurrency is never exceeded, and is used", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  Worker worker({"--threads", "2"});
  register_worker(http, worker.url(), {"slow"}, 3);
  json batch = json::array();
  for (int i = 0; i < 24; ++i)
    batch.push_back({{"name", "slow"}, {"argument", {{"sleep_ms", 40}}}});
  REQUIRE(http.post("/v1/jobs", batch).status == 201);
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 24; }, 20s));
  CHECK(worker.stats()["max_in_flight"] == 3);
}

TEST_CASE("an endpoint's connections stay alive however many it runs at once", "[http]") {
  // Waves of 150 jobs that end together: every connection is idle at once between two waves,
  // and each one is used again rather than closed and opened anew.
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  Worker worker({"--threads", "2"});
  register_worker(http, worker.url(), {"wave"}, 150);
  json batch = json::array();
  for (int i = 0; i < 600; ++i)
    batch.push_back({{"name", "wave"}, {"argument", {{"sleep_ms", 30}}}});
  REQUIRE(http.post("/v1/jobs", batch).status == 201);
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 600; }, 30s));
  const json stats = worker.stats();
  CHECK(stats["max_in_flight"] == 150);
  CHECK(stats["connections"] <= 150);
}

TEST_CASE("a failing job runs exactly 1 + max_retry times with backoff, then is dead", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, kFastRetry});
  auto http = daemon.http();
  Worker worker;
  register_worker(http, worker.url(), {"*"}, 4);
  const auto start = std::chrono::steady_clock::now();
  const std::string id = push(
      http,
      {{"name", "flaky"}, {"argument", {{"fail", true}}}, {"max_retry", 2}, {"keep_result", true}});
  json result = result_of(http, id);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(result["type"] == "failure");
  CHECK(worker.stats()["by_job"][id] == json::array({1, 2, 3}));
  CHECK(elapsed >= 150ms);  // backoff 50 ms then 100 ms
  json dead = job(http, id);
  CHECK(dead["state"] == "dead");
  CHECK(dead["attempts"] == 3);
  CHECK(dead["last_error"].get<std::string>().find("failed on purpose") != std::string::npos);
}

TEST_CASE("should_retry false makes the first failure final", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, kFastRetry});
  auto http = daemon.http();
  Worker worker;
  register_worker(http, worker.url(), {"*"}, 4);
  const std::string id = push(http, {{"name", "n"},
                                     {"argument", {{"fail", true}, {"should_retry", false}}},
                                     {"max_retry", 5},
                                     {"keep_result", true}});
  CHECK(result_of(http, id)["should_retry"] == false);
  CHECK(worker.stats()["by_job"][id] == json::array({1}));
}

TEST_CASE("a job that fails twice then succeeds keeps its success", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, kFastRetry});
  auto http = daemon.http();
  Worker worker;
  register_worker(http, worker.url(), {"*"}, 4);
  const std::string id = push(
      http,
      {{"name", "n"}, {"argument", {{"fail_until", 3}}}, {"max_retry", 3}, {"keep_result", true}});
  json result = result_of(http, id);
  CHECK(result["type"] == "success");
  CHECK(worker.stats()["by_job"][id] == json::array({1, 2, 3}));
  CHECK(http.get("/v1/jobs/" + id + "/result").body == "null");  // fetched once
  CHECK(http.get("/v1/jobs/" + id).status == 404);
}

TEST_CASE("timeouts, HTTP errors and invalid bodies are failures the master writes", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, kFastRetry});
  auto http = daemon.http();
  Worker worker({"--threads", "2"});
  register_worker(http, worker.url(), {"*"}, 8);
  const std::string slow = push(http, {{"name", "n"},
                                       {"argument", {{"sleep_ms", 3000}}},
                                       {"timeout", 0.3},
                                       {"max_retry", 0},
                                       {"keep_result", true}});
  const std::string error500 = push(
      http,
      {{"name", "n"}, {"argument", {{"status", 500}}}, {"max_retry", 1}, {"keep_result", true}});
  const std::string garbage = push(
      http,
      {{"name", "n"}, {"argument", {{"garbage", true}}}, {"max_retry", 0}, {"keep_result", true}});
  json timed_out = result_of(http, slow);
  CHECK(timed_out["type"] == "failure");
  INFO(timed_out.dump());
  CHECK(timed_out["reason"] == "timeout");
  CHECK(timed_out["should_retry"] == true);

  json failed = result_of(http, error500);
  CHECK(failed["reason"] == "other");
  CHECK(failed["message"].get<std::string>().find("HTTP 500") != std::string::npos);
  CHECK(worker.stats()["by_job"][error500] == json::array({1, 2}));

  json invalid = result_of(http, garbage);
  CHECK(invalid["message"].get<std::string>().find("invalid result") != std::string::npos);
}

// A worker connection's deadline timer looks once a second (common/socket_deadline.hpp): a
// timeout between two looks still ends the attempt when it passes, not at the next look.
TEST_CASE("an attempt longer than its timeout of 1.5 s ends at 1.5 s", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, kFastRetry});
  auto http = daemon.http();
  Worker worker;
  register_worker(http, worker.url(), {"*"}, 4);
  const auto started = std::chrono::steady_clock::now();
  const std::string slow = push(http, {{"name", "n"},
                                       {"argument", {{"sleep_ms", 10000}}},
                                       {"timeout", 1.5},
                                       {"max_retry", 0},
                                       {"keep_result", true}});
  json timed_out = result_of(http, slow);
  const auto took = std::chrono::steady_clock::now() - started;
  INFO(timed_out.dump());
  CHECK(timed_out["reason"] == "timeout");
  // Ended by the master waiting on the connection, not found later by the reaper.
  CHECK(timed_out["message"].get<std::string>().find("no answer within the job's timeout") !=
        std::string::npos);
  CHECK(took >= 1400ms);
  CHECK(took < 1900ms);
}

TEST_CASE("an unreachable endpoint burns no attempts and is shown unhealthy", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, kFastRetry});
  auto http = daemon.http();
  const std::string dead_url = "http://127.0.0.1:" + std::to_string(jq::test::free_port()) + "/";
  const std::string dead_id = register_worker(http, dead_url, {"n"}, 4);
  const std::string id = push(http, {{"name", "n"}, {"max_retry", 0}, {"keep_result", true}});
  REQUIRE(wait_until([&] { return http.get("/v1/workers/" + dead_id).value()["healthy"] == false; },
                     5s));
  CHECK(job(http, id)["state"] == "queued");
  CHECK(job(http, id)["attempts"] == 0);

  Worker alive;
  register_worker(http, alive.url(), {"n"}, 4);
  CHECK(result_of(http, id)["type"] == "success");
  CHECK(alive.stats()["by_job"][id] == json::array({1}));
}

TEST_CASE("a worker host that drops connections is unreachable after dispatch.connect_timeout",
          "[http]") {
  jq::test::FullListener host;
  RedisServer redis;
  Daemon daemon({redis.url(), 4, std::string(kFastRetry) + "dispatch:\n  connect_timeout: 0.3\n"});
  auto http = daemon.http();
  const std::string url = "http://127.0.0.1:" + std::to_string(host.port()) + "/";
  const std::string wid = register_worker(http, url, {"n"}, 4);
  const std::string id = push(http, {{"name", "n"}, {"max_retry", 0}});
  // The default (10 s) would hold the job on its way until then.
  REQUIRE(
      wait_until([&] { return http.get("/v1/workers/" + wid).value()["healthy"] == false; }, 5s));
  CHECK_THAT(http.get("/v1/workers/" + wid).value()["last_error"].get<std::string>(),
             Catch::Contains("cannot connect"));
  CHECK(job(http, id)["attempts"] == 0);
}

TEST_CASE("a job whose timeout ends before a dropping host's connect timeout keeps its attempts",
          "[http]") {
  jq::test::FullListener host;
  RedisServer redis;
  Daemon daemon({redis.url(), 4, kFastRetry});  // the default connect timeout: 10 s
  auto http = daemon.http();
  const std::string url = "http://127.0.0.1:" + std::to_string(host.port()) + "/";
  const std::string wid = register_worker(http, url, {"n"}, 4);
  const std::string id = push(http, {{"name", "n"}, {"timeout", 0.5}, {"max_retry", 0}});
  // Cut short by the job's deadline, the connect still made nothing reach the worker.
  REQUIRE(
      wait_until([&] { return http.get("/v1/workers/" + wid).value()["healthy"] == false; }, 5s));
  const json j = job(http, id);
  CHECK(j["attempts"] == 0);
  CHECK(j["state"] != "dead");
}

TEST_CASE("a long poll whose client left leaves the result for the next fetch", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, kFastRetry});
  auto http = daemon.http();
  const std::string id = push_kept_300ms(http);
  {
    jq::test::RawConnection poll(daemon.port());
    REQUIRE(poll.send("GET /v1/jobs/" + id + "/result?wait=20 HTTP/1.1\r\nHost: x\r\n\r\n"));
    // Waiting: the poll counted itself in the job's watch key.
    jq::test::SyncRedis r(redis.port());
    REQUIRE(wait_until([&] { return !r.call({"KEYS", "*:watch:*"}).elements.empty(); }, 5s));
  }  // the client gives up and closes
  // The job runs 300 ms on this master, which hands a result to the polls waiting here.
  Worker worker;
  register_worker(http, worker.url(), {"n"}, 1);
  const json result = result_of(http, id);
  REQUIRE(result.is_object());
  CHECK(result["type"] == "success");
}

// Bytes the master has not read yet (a request pipelined behind the poll, a TLS client's
// close_notify) must not hide the client's close that follows them.
TEST_CASE("a long poll whose client sent more and then left leaves the result for the next fetch",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, kFastRetry});
  auto http = daemon.http();
  const std::string id = push_kept_300ms(http);
  {
    jq::test::RawConnection poll(daemon.port());
    REQUIRE(poll.send("GET /v1/jobs/" + id + "/result?wait=20 HTTP/1.1\r\nHost: x\r\n\r\n"));
    jq::test::SyncRedis r(redis.port());
    REQUIRE(wait_until([&] { return !r.call({"KEYS", "*:watch:*"}).elements.empty(); }, 5s));
    REQUIRE(poll.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
    std::this_thread::sleep_for(100ms);  // the pipelined request is seen first, on its own
  }                                      // then the client closes
  Worker worker;
  register_worker(http, worker.url(), {"n"}, 1);
  const json result = result_of(http, id);
  REQUIRE(result.is_object());
  CHECK(result["type"] == "success");
}

TEST_CASE("a busy worker (503) gets the job back without using an attempt", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, kFastRetry});
  auto http = daemon.http();
  Worker busy;
  register_worker(http, busy.url(), {"n"}, 1);
  const std::string id =
      push(http,
           {{"name", "n"}, {"argument", {{"status", 503}, {"retry_after", 30}}}, {"max_retry", 0}});
  REQUIRE(wait_until([&] { return busy.stats()["received"] == 1; }, 5s));
  REQUIRE(wait_until([&] { return job(http, id)["state"] == "queued"; }, 5s));
  CHECK(job(http, id)["attempts"] == 0);
  // GET /v1/workers shows until when its Retry-After of 30 s holds the endpoint back.
  json shown;
  REQUIRE(wait_until(
      [&] {
        shown = http.get("/v1/workers").value().at(0);
        return shown["busy_until"].is_string();
      },
      5s));
  const auto now_ms = jq::epoch_ms(std::chrono::system_clock::now());
  const std::string until = shown["busy_until"];
  CHECK(until > jq::iso8601_utc(now_ms + 25'000));
  CHECK(until < jq::iso8601_utc(now_ms + 31'000));
}

// Every master holds a busy endpoint back, not only the one that got the answer: the job it gave
// back was sent to the same worker by the other master ~20 ms later (an audit with two masters).
TEST_CASE("a busy answer holds the endpoint back on every master for its Retry-After", "[http]") {
  RedisServer redis;
  Daemon first({redis.url(), 4, kFastRetry});
  Daemon second({redis.url(), 4, kFastRetry});
  Worker busy;
  register_worker(first.http(), busy.url(), {"n"}, 2);
  // Both masters know the endpoint (a job each), before the busy one.
  for (const Daemon* m : {&first, &second}) {
    CHECK(result_of(m->http(), push(m->http(), {{"name", "n"}, {"keep_result", true}}))["type"] ==
          "success");
  }
  const int before = busy.stats()["received"].get<int>();
  push(first.http(),
       {{"name", "n"}, {"argument", {{"status", 429}, {"retry_after", 3}}}, {"max_retry", 0}});
  REQUIRE(wait_until([&] { return busy.stats()["received"].get<int>() == before + 1; }, 5s));
  // Not again within the 3 s it asked for, from either master; then again.
  CHECK_FALSE(wait_until([&] { return busy.stats()["received"].get<int>() > before + 1; }, 2s));
  CHECK(wait_until([&] { return busy.stats()["received"].get<int>() > before + 1; }, 5s));
}

TEST_CASE("a Retry-After of days holds the endpoint back only dispatch.max_busy_pause", "[http]") {
  RedisServer redis;
  DaemonOptions options{redis.url(), 4, kFastRetry};
  options.extra_yaml += "dispatch:\n  max_busy_pause: 0.2\n";
  Daemon daemon(options);
  auto http = daemon.http();
  Worker busy;
  register_worker(http, busy.url(), {"n"}, 1);
  push(http, {{"name", "n"}, {"argument", {{"status", 503}, {"retry_after", 999999}}}});
  // 999999 s would be 11 days; capped at 0.2 s the job comes back at once, again and again.
  CHECK(wait_until([&] { return busy.stats()["received"] >= 3; }, 10s));
}

TEST_CASE("a Retry-After of 0 holds the endpoint back a moment, not in a loop", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, kFastRetry});
  auto http = daemon.http();
  Worker busy;
  register_worker(http, busy.url(), {"n"}, 1);
  const auto began = std::chrono::steady_clock::now();
  push(http, {{"name", "n"}, {"argument", {{"status", 503}, {"retry_after", 0}}}});
  // The job comes back to the worker again and again, 100 ms apart at least: four pauses.
  REQUIRE(wait_until([&] { return busy.stats()["received"] >= 5; }, 10s));
  CHECK(std::chrono::steady_clock::now() - began >= 400ms);
}

TEST_CASE("an answer above limits.max_result_bytes is a failure naming the limit, never stored",
          "[http]") {
  RedisServer redis;
  DaemonOptions options{redis.url(), 4, kFastRetry};
  options.extra_yaml += "limits:\n  max_result_bytes: 1024\n";
  Daemon daemon(options);
  auto http = daemon.http();
  Worker echo;
  register_worker(http, echo.url(), {"*"}, 2);
  const std::string big(2000, 'x');  // jqworker echoes it: an answer of about 2 KB
  const std::string id =
      push(http, {{"name", "n"}, {"argument", big}, {"max_retry", 0}, {"keep_result", true}});
  const json result = result_of(http, id);
  REQUIRE(result.is_object());
  INFO(result.dump().substr(0, 300));
  CHECK(result["type"] == "failure");
  CHECK(result["reason"] == "other");
  CHECK(result["message"].get<std::string>().find("limits.max_result_bytes (1024 bytes)") !=
        std::string::npos);
  CHECK(result.dump().find(big) == std::string::npos);
  // A small answer still goes through on the same endpoint.
  const std::string small = push(http, {{"name", "n"}, {"argument", "ok"}, {"keep_result", true}});
  CHECK(result_of(http, small)["type"] == "success");

  // Another status is the answer whatever the size of its body: a 500 names its status, and a
  // busy 503 with a large error page is busy (no attempt used), not a failure.
  const std::string error_page =
      push(http, {{"name", "n"},
                  {"argument", {{"status", 500}, {"status_bytes", 4096}}},
                  {"max_retry", 0},
                  {"keep_result", true}});
  const json failed = result_of(http, error_page);
  INFO(failed.dump());
  CHECK(failed["message"].get<std::string>().starts_with("worker answered HTTP 500"));
  const std::string busy =
      push(http, {{"name", "n"},
                  {"argument", {{"status", 503}, {"retry_after", 60}, {"status_bytes", 4096}}},
                  {"max_retry", 0}});
  REQUIRE(wait_until(
      [&] {
        const json w = http.get("/v1/workers").value()[0];
        return !w["busy_until"].is_null();
      },
      10s));
  const json held = http.get("/v1/jobs/" + busy).value();
  CHECK(held["state"] == "queued");
  CHECK(held["attempts"] == 0);
}

// More than the sockets take at once, each way: the push read in many parts, the job sent to
// the worker and the worker's answer in many writes (common/send_now.hpp sends what the kernel
// takes, an asynchronous write the rest), and the result fetched the same way.
TEST_CASE("a job and its result of 6 MiB cross every connection whole", "[http]") {
  RedisServer redis;
  DaemonOptions options{redis.url(), 4, kFastRetry};
  options.extra_yaml += "limits:\n  max_body_bytes: 16777216\n  max_result_bytes: 16777216\n";
  Daemon daemon(options);
  auto http = daemon.http();
  Worker echo;
  register_worker(http, echo.url(), {"*"}, 2);
  std::string big(6 * 1024 * 1024, ' ');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + (i * 7919) % 26);
  const std::string id =
      push(http, {{"name", "n"}, {"argument", big}, {"max_retry", 0}, {"keep_result", true}});
  const json result = result_of(http, id);
  REQUIRE(result.is_object());
  CHECK(result["type"] == "success");
  const bool whole = result["result"].is_string() && result["result"].get<std::string>() == big;
  CHECK(whole);
}

TEST_CASE("a long poll answers right after the result is stored", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  Worker worker;
  register_worker(http, worker.url(), {"*"}, 4);
  const std::string id = push_kept_300ms(http);
  CHECK(long_poll_delay_ms(http, id) < 50);
}

TEST_CASE("a long poll of a job that keeps no result waits until it ends, then answers nil",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  Worker worker;
  register_worker(http, worker.url(), {"*"}, 4);
  using Clock = std::chrono::steady_clock;
  const std::string id = push(http, {{"name", "n"}, {"argument", {{"sleep_ms", 700}}}});
  const auto began = Clock::now();
  auto ended = http.get("/v1/jobs/" + id + "/result?wait=10");
  const auto waited = Clock::now() - began;
  CHECK(ended.status == 200);
  CHECK(ended.body == "null");
  CHECK(waited >= 600ms);  // it ran 700 ms: the poll was held, not answered 202 at once
  CHECK(waited < 3s);
  CHECK(http.get("/v1/jobs/" + id).status == 404);  // succeeded, its result not kept

  // Still running when the wait is over: 202 after the wait.
  const std::string slow = push(http, {{"name", "n"}, {"argument", {{"sleep_ms", 5000}}}});
  const auto again = Clock::now();
  auto pending = http.get("/v1/jobs/" + slow + "/result?wait=1");
  CHECK(pending.status == 202);
  CHECK(Clock::now() - again >= 900ms);
}

TEST_CASE("jobs pushed one by one to a worker with a free slot skip the queue, unannounced",
          "[http]") {
  WarmWorker w("n");
  const HttpClient& http = w.http;
  jq::test::SyncRedis r(w.redis.port());
  jq::test::EventListener events(w.redis.port(), jq::redis::Keys{});
  int succeeded = 0;
  for (int i = 0; i < 20; ++i) {
    const std::string id = push(http, {{"name", "n"}, {"keep_result", true}});
    if (result_of(http, id)["type"] == "success") ++succeeded;
  }
  CHECK(succeeded == 20);
  // Queued, each job would have been announced ("p n ...") and reserved. Taken at once, it is
  // not; a slot given back after 100 ms idle on a slow machine sends the odd one the usual way.
  const int announced = events_starting(events, r, "p n ");
  INFO("announced: " << announced);
  CHECK(announced < 10);
}

// A busy endpoint has room ahead of it (dispatch.reserve_ahead: about what its running
// attempts answer in 50 ms, here one job): a job pushed then is taken at once to wait there, as
// a job queued, announced and reserved ahead would have waited, and starts when the slot frees.
TEST_CASE("a job pushed while every slot is busy waits ahead of the worker, taken unannounced",
          "[http]") {
  WarmWorker w("n", 1);
  const HttpClient& http = w.http;
  jq::test::SyncRedis r(w.redis.port());
  jq::test::EventListener events(w.redis.port(), jq::redis::Keys{});
  const std::string first =
      push(http, {{"name", "n"}, {"argument", {{"sleep_ms", 600}}}, {"keep_result", true}});
  REQUIRE(wait_until([&] { return job(http, first)["state"] == "running"; }, 5s));
  events.take(r);
  const std::string next = push(http, {{"name", "n"}, {"keep_result", true}});
  const json taken = job(http, next);
  CHECK(taken["state"] == "running");  // its attempt counted at the push
  CHECK(taken["attempts"] == 1);
  CHECK(job(http, first)["state"] == "running");  // the only slot is still busy
  CHECK(events_starting(events, r, "p n ") == 0);
  CHECK(result_of(http, first)["type"] == "success");
  CHECK(result_of(http, next)["type"] == "success");
  CHECK(w.worker.stats()["max_in_flight"] == 1);
}

// The net for announcements that never came: every second the master reads again the heads it
// knows. A job stored with its announcement sent where no master listens (as one missed while
// the subscriber reconnected) still runs, though the master knew its queue empty.
TEST_CASE("a job whose announcement never came still runs, found by the heads read again",
          "[http]") {
  WarmWorker w("n");
  jq::test::SyncRedis r(w.redis.port());
  using jq::redis::bindings::PushJobs;
  const jq::redis::Keys keys;
  const int shard = 2;
  const auto now_ms = jq::epoch_ms(std::chrono::system_clock::now());
  PushJobs::Args args{
      now_ms, now_ms * 1000, "nobody-listens", "", shard, jq::test::kMaxListBytes, "", {}, {}};
  args.jobs.push_back({"n", "\x81\xa1k\x01", 0, 3, true, 30000, 0, "", false, 0, "", "",
                       PushJobs::OnDuplicate::keep});
  const auto reply = r.eval(PushJobs::call(PushJobs::keys(keys, shard), std::move(args)));
  const auto fields = jq::test::fields_of(reply);
  REQUIRE(fields.size() == 1);
  const std::string id = std::to_string(shard) + "-" + fields[0];
  CHECK(result_of(w.http, id, 10s)["type"] == "success");
}

// How often Redis ran `command` (INFO commandstats), scripts' calls included.
long long command_calls(jq::test::SyncRedis& r, const std::string& command) {
  const std::string info = r.call({"INFO", "commandstats"}).str;
  const std::string key = "cmdstat_" + command + ":calls=";
  const auto at = info.find(key);
  return at == std::string::npos ? 0 : std::stoll(info.substr(at + key.size()));
}

TEST_CASE("a long poll of a job running on its master waits there: no look in Redis, no event",
          "[http]") {
  WarmWorker w("n");
  const HttpClient& http = w.http;
  jq::test::SyncRedis r(w.redis.port());
  jq::test::EventListener events(w.redis.port(), jq::redis::Keys{});
  // fetchResult runs PTTL when it counts a poll that starts waiting (nothing else does).
  const long long looks_before = command_calls(r, "pttl");
  for (int i = 0; i < 10; ++i) {
    // Still running when the poll comes: 50 ms on the worker. The poll answers as it ends.
    const std::string id =
        push(http, {{"name", "n"}, {"argument", {{"sleep_ms", 50}}}, {"keep_result", true}});
    CHECK(long_poll_delay_ms(http, id) < 50);
  }
  const long long looks = command_calls(r, "pttl") - looks_before;
  const int results_announced = events_starting(events, r, "r ");
  INFO("looks: " << looks << ", results announced: " << results_announced);
  // A job sent the usual way (a slot given back while idle) may be reserved after its poll.
  CHECK(looks <= 5);
  CHECK(results_announced <= 5);
}

TEST_CASE(
    "one long poll of a job that fails on its master and succeeds on a retry gets the success",
    "[http]") {
  // The poll waits where the first attempt runs; its failure must wake the poll, which then
  // waits for the retry (run here again or elsewhere) instead of its full wait.
  WarmWorker w("n", 4, kFastRetry);
  const HttpClient& http = w.http;
  const std::string id = push(http, {{"name", "n"},
                                     {"argument", {{"fail_until", 3}, {"sleep_ms", 50}}},
                                     {"max_retry", 3},
                                     {"keep_result", true}});
  const auto start = std::chrono::steady_clock::now();
  auto res = http.get("/v1/jobs/" + id + "/result?wait=20");
  const auto took = std::chrono::steady_clock::now() - start;
  REQUIRE(res.status == 200);
  CHECK(res.value()["type"] == "success");
  CHECK(w.worker.stats()["by_job"][id] == json::array({1, 2, 3}));
  CHECK(took < 5s);
}

TEST_CASE("a long poll on one master answers right after another master stored the result",
          "[http]") {
  RedisServer redis;
  Daemon one({redis.url()});
  Daemon two({redis.url()});
  Worker worker;
  register_worker(one.http(), worker.url(), {"*"}, 4);
  const std::string id = push_kept_300ms(one.http());
  CHECK(long_poll_delay_ms(two.http(), id) < 50);
}

TEST_CASE("polls of one result on two masters: one gets it, the others hear at once it is gone",
          "[http]") {
  // The master that records the success hands the result to its own waiting poll without
  // storing it; polls elsewhere (and its other polls) must not wait out their time for it.
  RedisServer redis;
  Daemon one({redis.url()});
  Daemon two({redis.url()});
  Worker worker;
  register_worker(one.http(), worker.url(), {"*"}, 4);
  for (int round = 0; round < 3; ++round) {
    const std::string id = push_kept_300ms(one.http());
    auto poll = [id](const Daemon& d) {
      const auto start = std::chrono::steady_clock::now();
      auto res = d.http().get("/v1/jobs/" + id + "/result?wait=10");
      return std::make_pair(
          res.status == 200 ? res.value() : json("status " + std::to_string(res.status)),
          std::chrono::steady_clock::now() - start);
    };
    auto a = std::async(std::launch::async, poll, std::cref(one));
    auto b = std::async(std::launch::async, poll, std::cref(one));
    auto c = std::async(std::launch::async, poll, std::cref(two));
    int results = 0;
    for (auto* f : {&a, &b, &c}) {
      auto [body, took] = f->get();
      INFO("round " << round << ": " << body.dump());
      CHECK(took < 3s);
      if (body.is_object()) {
        CHECK(body["type"] == "success");
        ++results;
      } else {
        CHECK(body.is_null());
      }
    }
    CHECK(results == 1);
  }
}

TEST_CASE("a registration with a ttl lapses without heartbeats", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  const std::string id = register_worker(http, "http://127.0.0.1:9/", {"n"}, 1, 1.0);
  auto listed = http.get("/v1/workers/" + id);
  REQUIRE(listed.status == 200);
  CHECK(listed.value()["ttl"] == 1.0);
  CHECK_FALSE(listed.value()["expires_at"].is_null());
  CHECK(wait_until([&] { return http.get("/v1/workers/" + id).status == 404; }, 5s));
  CHECK(http.get("/v1/workers").value().empty());
}

// A master counts each attempt's end against its worker and writes the counts to Redis twice a
// second: counts (or a health mark) written after the worker was removed made its stats hash
// again, left in Redis for good with no registration to remove it with.
TEST_CASE("a worker removed while its job runs leaves no stats behind in Redis", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  Worker worker;
  const std::string id = register_worker(http, worker.url(), {"n"}, 1);
  const std::string job =
      push(http, {{"name", "n"}, {"argument", {{"sleep_ms", 1000}}}, {"keep_result", true}});
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 1; }, 5s));
  REQUIRE(http.del("/v1/workers/" + id).status == 204);
  jq::test::SyncRedis r(redis.port());
  const jq::redis::Keys keys;
  REQUIRE(r.call({"EXISTS", keys.worker_stats(id)}).integer == 0);
  // It ends after the removal. The counts of another worker's attempt, ended after it, show
  // that the master's counts written since hold this one's too (the listing writes them).
  REQUIRE(
      wait_until([&] { return http.get("/v1/jobs/" + job).value()["state"] == "succeeded"; }, 5s));
  Worker other;
  register_worker(http, other.url(), {"n"}, 1);
  push(http, {{"name", "n"}});
  REQUIRE(wait_until(
      [&] {
        const json listed = http.get("/v1/workers").value();
        return listed.size() == 1 && listed[0]["dispatched"] == 1;
      },
      5s));
  CHECK(r.call({"EXISTS", keys.worker_stats(id)}).integer == 0);
}

// A worker that missed its heartbeats for a while (a network split, a long pause) and registers
// again gets a new id while it still runs the jobs it had: they count in its concurrency.
TEST_CASE("a worker registered again after a lapse keeps its concurrency while old jobs run",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  Worker worker({"--threads", "2"});
  const std::string first = register_worker(http, worker.url(), {"n"}, 1, 1.0);
  push(http, {{"name", "n"}, {"argument", {{"sleep_ms", 8000}}}});
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 1; }, 5s));
  // Lapsed and removed (the maintenance loop's expireWorkers): registered again, it is new.
  jq::test::SyncRedis r(redis.port());
  const jq::redis::Keys keys;
  REQUIRE(wait_until(
      [&] {
        return r.call({"HEXISTS", keys.worker_urls(), worker.url()}).integer == 0;
      },
      5s));
  const std::string second = register_worker(http, worker.url(), {"n"}, 1);
  CHECK(second != first);
  // The running job holds the new registration's one slot, in Redis too (other masters see it).
  const std::string slots_key = keys.worker_slots(second);
  CHECK(wait_until([&] { return r.call({"HLEN", slots_key}).integer == 1; }, 3s));
  push(http, {{"name", "n"}});
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 2; }, 15s));
  CHECK(worker.stats()["max_in_flight"] == 1);
}

TEST_CASE("registering a known url updates it and keeps its id, and a delete stops dispatch",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  Worker worker;
  json body = {{"url", worker.url()}, {"names", {"a"}}, {"concurrency", 2}};
  auto first = http.post("/v1/workers", body);
  CHECK(first.status == 201);
  body["concurrency"] = 5;
  auto again = http.post("/v1/workers", body);
  CHECK(again.status == 200);
  CHECK(again.value()["id"] == first.value()["id"]);
  const std::string wid = first.value()["id"];
  CHECK(http.get("/v1/workers/" + wid).value()["concurrency"] == 5);
  CHECK(http.del("/v1/workers/" + wid).status == 204);
  CHECK(http.del("/v1/workers/" + wid).status == 404);
  const std::string id = push(http, {{"name", "a"}});
  // Something to wait for instead of a pause: the same worker process, registered again under
  // another path for another name, runs a job pushed after `a`. By the time that job has
  // succeeded the scheduler has made a pass with `a` ready; had the deleted registration been
  // left in it, `a` would have gone out in that pass or before.
  register_worker(http, worker.url() + "b", {"b"}, 1);
  const std::string other = push(http, {{"name", "b"}, {"keep_result", true}});
  REQUIRE(wait_until([&] { return job(http, other)["state"] == "succeeded"; }, 5s));
  CHECK(worker.stats()["received"] == 1);
  CHECK(job(http, id)["state"] == "queued");
}

TEST_CASE("a MessagePack registration whose header value is not UTF-8 is 400 naming headers",
          "[http]") {
  // Registrations are stored as JSON text, which cannot carry such bytes: this was a 500.
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  const json body = {{"url", "http://127.0.0.1:9/"},
                     {"names", {"a"}},
                     {"headers", {{"X-Token", std::string("\xff\xfe token", 8)}}}};
  const std::vector<std::uint8_t> packed = json::to_msgpack(body);
  auto res = http.post_msgpack("/v1/workers", std::string(packed.begin(), packed.end()));
  CHECK(res.status == 400);
  CHECK(res.value()["field"] == "headers");
  CHECK(res.value()["message"] == "the value of \"X-Token\" must be valid UTF-8 text");
  CHECK(http.get("/v1/workers").value().empty());
}

TEST_CASE("a master killed with jobs in flight loses none of them", "[http]") {
  RedisServer redis;
  Worker worker({"--threads", "2"});
  std::vector<std::string> ids;
  {
    Daemon first({redis.url(), 4, kFastRetry});
    auto http = first.http();
    register_worker(http, worker.url(), {"*"}, 8);
    for (int i = 0; i < 6; ++i) {
      ids.push_back(push(http, {{"name", "n"},
                                {"argument", {{"sleep_ms", 800}}},
                                {"timeout", 1},
                                {"keep_result", true}}));
    }
    REQUIRE(wait_until([&] { return worker.stats()["in_flight"] == 6; }, 5s));
    first.stop(SIGKILL, 5s);
  }
  Daemon second({redis.url(), 4, kFastRetry});
  auto http = second.http();
  for (const auto& id : ids) {
    INFO(second.log());
    CHECK(result_of(http, id, 30s)["type"] == "success");
  }
}

TEST_CASE("jobs refused together by a worker that is down go to it soon after it is back",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 1, kFastRetry});  // one shard: one reservation takes all eight
  auto http = daemon.http();
  const std::uint16_t port = jq::test::free_port();  // the worker's, while it is down
  const std::string wid =
      register_worker(http, "http://127.0.0.1:" + std::to_string(port) + "/", {"*"}, 8);
  json batch = json::array();
  for (int i = 0; i < 8; ++i) batch.push_back({{"name", "n"}, {"keep_result", true}});
  const auto pushed = http.post("/v1/jobs", batch);
  REQUIRE(pushed.status == 201);
  const std::vector<std::string> ids = pushed.value()["ids"];
  REQUIRE(ids.size() == 8);
  // The eight attempts fail together, as those of a worker killed with eight jobs in flight
  // do, and their jobs wait in the queue; only then does the worker come up.
  auto refused = [&] {
    const std::string error = http.get("/v1/workers/" + wid).value()["last_error"].dump();
    if (error.find("Connection refused") == std::string::npos) return false;
    for (const auto& id : ids) {
      if (job(http, id)["state"] != "queued") return false;
    }
    return true;
  };
  REQUIRE(wait_until(refused, 10s));
  Worker worker({}, port);
  // One outage holds the endpoint off once (250 ms, doubling per failed try after it), not
  // eight times over: that reached the 30 s cap.
  for (const auto& id : ids) CHECK(result_of(http, id, 10s)["type"] == "success");
}

TEST_CASE("a paused queue accepts pushes and dispatches nothing until resumed", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  Worker worker;
  register_worker(http, worker.url(), {"*"}, 4);
  auto paused = http.request("POST", "/v1/queues/mail/pause", "", {{"Accept", "application/json"}});
  REQUIRE(paused.status == 200);
  CHECK(paused.value()["paused"] == true);
  const std::string held = push(http, {{"name", "mail"}, {"keep_result", true}});
  const std::string other = push(http, {{"name", "other"}, {"keep_result", true}});
  CHECK(result_of(http, other)["type"] == "success");  // other queues keep flowing
  CHECK(job(http, held)["state"] == "queued");
  CHECK_FALSE(worker.stats()["by_job"].contains(held));
  auto resumed =
      http.request("POST", "/v1/queues/mail/resume", "", {{"Accept", "application/json"}});
  CHECK(resumed.value()["paused"] == false);
  CHECK(result_of(http, held)["type"] == "success");
}

TEST_CASE("a batch skips the queue only whole: a better job in it that must queue runs first",
          "[http]") {
  WarmWorker w("n", 1);
  const HttpClient& http = w.http;
  // The second job has a delay (of 0), so it is queued, not taken at once; the first, alone,
  // could have been taken for the free slot and run before it.
  auto res = http.post("/v1/jobs", json::array({{{"name", "n"}, {"priority", 5}},
                                                {{"name", "n"}, {"priority", 0}, {"delay", 0}}}));
  REQUIRE(res.status == 201);
  const std::vector<std::string> ids = res.value()["ids"];
  REQUIRE(wait_until([&] { return w.worker.stats()["received"] == 3; }, 10s));
  const auto order = w.worker.stats()["order"].get<std::vector<std::string>>();
  REQUIRE(order.size() == 3);
  CHECK(order[1] == ids[1]);
  CHECK(order[2] == ids[0]);
}

TEST_CASE("a push right after a pause stays queued, though its worker has a free slot", "[http]") {
  WarmWorker w("mail");
  const HttpClient& http = w.http;
  auto paused = http.request("POST", "/v1/queues/mail/pause", "", {{"Accept", "application/json"}});
  REQUIRE(paused.status == 200);
  const std::string held = push(http, {{"name", "mail"}, {"keep_result", true}});
  CHECK(job(http, held)["state"] == "queued");
  CHECK(http.get("/v1/jobs/" + held + "/result?wait=1").status == 202);
  CHECK(job(http, held)["attempts"] == 0);
  http.request("POST", "/v1/queues/mail/resume", "", {{"Accept", "application/json"}});
  CHECK(result_of(http, held)["type"] == "success");
}

// A long poll that waited out its wait answered what its first look had found: 202 "queued" for
// a job cancelled meanwhile (or started, or finished while its "r" event was lost).
TEST_CASE("a long poll that waits out its wait answers what the job is by then", "[http]") {
  WarmWorker w("mail");
  const HttpClient& http = w.http;
  auto paused = http.request("POST", "/v1/queues/mail/pause", "", {{"Accept", "application/json"}});
  REQUIRE(paused.status == 200);
  const std::string id = push(http, {{"name", "mail"}, {"keep_result", true}});
  auto poll = std::async(std::launch::async,
                         [&] { return w.daemon.http().get("/v1/jobs/" + id + "/result?wait=2"); });
  // The poll has looked and waits: its job's watch key exists.
  jq::test::SyncRedis r(w.redis.port());
  REQUIRE(wait_until([&] { return !r.call({"KEYS", "*watch:*"}).elements.empty(); }, 5s));
  REQUIRE(http.request("DELETE", "/v1/jobs/" + id, "", {}).status == 204);
  const auto res = poll.get();
  CHECK(res.status == 200);
  CHECK(res.value().is_null());
}

TEST_CASE("a dead job retried from the dead set runs again with fresh attempts", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, kFastRetry});
  auto http = daemon.http();
  Worker worker;
  register_worker(http, worker.url(), {"flaky"}, 2);
  const std::string id =
      push(http, {{"name", "flaky"}, {"argument", {{"status", 500}}}, {"max_retry", 1}});
  REQUIRE(wait_until([&] { return job(http, id)["state"] == "dead"; }, 10s));
  auto dead = http.get("/v1/dead?name=flaky").value();
  REQUIRE(dead.size() == 1);
  CHECK(dead[0]["id"] == id);
  CHECK(dead[0]["attempts"] == 2);
  CHECK(dead[0]["result"]["reason"] == "other");

  auto retried =
      http.request("POST", "/v1/dead/" + id + "/retry", "", {{"Accept", "application/json"}});
  CHECK(retried.status == 200);
  // It runs again from attempt 1 (and, still asking for a 500, dies again).
  REQUIRE(wait_until([&] { return worker.stats()["by_job"][id].size() == 4; }, 10s));
  CHECK(worker.stats()["by_job"][id] == json::array({1, 2, 1, 2}));
  REQUIRE(wait_until([&] { return job(http, id)["state"] == "dead"; }, 10s));

  CHECK(http.del("/v1/dead/" + id).status == 204);
  CHECK(http.get("/v1/dead?name=flaky").value().empty());
  CHECK(http.get("/v1/jobs/" + id).status == 404);
}

TEST_CASE("two masters on one Redis share an endpoint's concurrency", "[http]") {
  RedisServer redis;
  Daemon one({redis.url()});
  Daemon two({redis.url()});
  Worker worker({"--threads", "2"});
  register_worker(one.http(), worker.url(), {"*"}, 2);
  json batch = json::array();
  for (int i = 0; i < 10; ++i) batch.push_back({{"name", "n"}, {"argument", {{"sleep_ms", 60}}}});
  REQUIRE(one.http().post("/v1/jobs", batch).status == 201);
  REQUIRE(two.http().post("/v1/jobs", batch).status == 201);
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 20; }, 20s));
  CHECK(worker.stats()["max_in_flight"] == 2);
}

// A master that stalls past its heartbeat's ttl (a frozen VM, a stopped process) has its slot
// holdings dropped by the others (acquireSlots) while its attempts still run. Woken, it must say
// them again, or the other masters lease those slots a second time while it runs them.
TEST_CASE("a master whose heartbeat lapsed states its slot holdings again", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  Worker worker({"--threads", "2"});
  register_worker(daemon.http(), worker.url(), {"*"}, 1);
  push(daemon.http(), {{"name", "n"}, {"argument", {{"sleep_ms", 20000}}}});
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 1; }, 5s));
  jq::test::SyncRedis r(redis.port());
  const auto slots_key = r.call({"KEYS", "*:slots:*"});
  REQUIRE(slots_key.elements.size() == 1);
  const std::string key = slots_key.elements[0].str;
  REQUIRE(r.call({"HLEN", key}).integer == 1);
  // A heartbeat of the maintenance loop after the lease (its score moves), then the stall.
  const auto score = [&] {
    const auto masters = r.call({"ZRANGE", jq::redis::Keys{}.masters(), "0", "0", "WITHSCORES"});
    return masters.elements.size() == 2 ? std::stoll(masters.elements[1].str) : 0LL;
  };
  const long long leased_at = score();
  REQUIRE(wait_until([&] { return score() != leased_at; }, 5s));
  REQUIRE(::kill(daemon.pid(), SIGSTOP) == 0);
  const auto lapsed = [&] {
    const auto masters = r.call({"ZRANGE", jq::redis::Keys{}.masters(), "0", "0", "WITHSCORES"});
    return masters.elements.size() == 2 &&
           std::stoll(masters.elements[1].str) < jq::epoch_ms(std::chrono::system_clock::now());
  };
  REQUIRE(wait_until(lapsed, 10s));
  r.call({"DEL", key});  // what another master's acquireSlots does to a lapsed master's holding
  REQUIRE(::kill(daemon.pid(), SIGCONT) == 0);
  // Woken, the master says it holds the slot its attempt still uses.
  CHECK(wait_until([&] { return r.call({"HLEN", key}).integer == 1; }, 5s));
}

TEST_CASE("jobs a name's endpoints share go to the one with the fewest outstanding", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  Worker a({"--threads", "2"});
  Worker b({"--threads", "2"});
  register_worker(http, a.url(), {"n"}, 8);
  register_worker(http, b.url(), {"*"}, 8);
  // b has run a job, so the scheduler knows it (a batch pushed before a loaded machine's master
  // had taken in b's registration went to a alone, once in a full run); then both hold no slot,
  // as when they had just registered.
  CHECK(result_of(http, push(http, {{"name", "b.only"}, {"keep_result", true}}))["type"] ==
        "success");
  jq::test::SyncRedis r(redis.port());
  const auto no_slot_held = [&] {
    for (const auto& key : r.call({"KEYS", "*:slots:*"}).elements) {
      for (const auto& held : r.call({"HVALS", key.str}).elements) {
        if (held.str != "0") return false;
      }
    }
    return true;
  };
  REQUIRE(wait_until(no_slot_held, 5s));
  json batch = json::array();
  for (int i = 0; i < 8; ++i) batch.push_back({{"name", "n"}, {"argument", {{"sleep_ms", 300}}}});
  REQUIRE(http.post("/v1/jobs", batch).status == 201);
  REQUIRE(wait_until(
      [&] { return a.stats()["received"].get<int>() + b.stats()["received"].get<int>() == 9; },
      10s));
  CHECK(a.stats()["received"] == 4);
  CHECK(b.stats()["received"] == 5);  // the probe and 4
}

TEST_CASE("workers in the config file get jobs like registered ones, with their headers",
          "[http]") {
  RedisServer redis;
  Worker worker;
  Daemon daemon({redis.url(), 4,
                 "workers:\n  - url: " + worker.url() +
                     "\n    names: ['*']\n    concurrency: 2\n    headers: {X-Api-Key: k1}\n"});
  auto http = daemon.http();
  const std::string id = push(http, {{"name", "n"}, {"keep_result", true}});
  CHECK(result_of(http, id)["type"] == "success");
  const json seen = worker.stats()["headers_seen"];
  CHECK(seen["x-api-key"] == "k1");
  CHECK(seen["x-jq-job-id"] == id);
  CHECK(seen["x-jq-attempt"] == "1");
}
