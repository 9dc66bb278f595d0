// Redis going away and coming back while the daemon runs; scripts flushed from Redis.
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <future>
#include <optional>

#include "src/redis/keys.hpp"
#include "src/redis/script_sources.hpp"
#include "tests/support/daemon.hpp"
#include "tests/support/job_calls.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/tcp_forwarder.hpp"
#include "tests/support/worker.hpp"

using namespace std::chrono_literals;
using jq::test::Daemon;
using jq::test::DaemonOptions;
using jq::test::RedisServer;
using jq::test::SyncRedis;
using jq::test::TempDir;
using jq::test::wait_until;
using jq::test::Worker;
using nlohmann::json;

namespace {

// A master reaches its Redis through `forwarder`, which can refuse, replace or lose answers.
std::string through(const jq::test::TcpForwarder& forwarder) {
  return "redis://127.0.0.1:" + std::to_string(forwarder.port()) + "/0";
}

// A job `worker` (serving `n`) refuses as busy for 30 s, pushed: its id.
std::string push_refused(const jq::test::HttpClient& http) {
  return jq::test::push(
      http, {{"name", "n"}, {"argument", {{"status", 503}, {"retry_after", 30}}}, {"timeout", 30}});
}

// The constraint "one" (concurrency 1 on the jobs named `n`), and `worker` for them with one slot.
void constrained_worker(const jq::test::HttpClient& http, Worker& worker) {
  REQUIRE(http.post("/v1/constraints",
                    {{"name", "one"}, {"match", {{"name", "n"}}}, {"concurrency", 1}})
              .status == 201);
  jq::test::register_worker(http, worker, {"n"}, 1);
}

}  // namespace

TEST_CASE("while Redis is down requests get 503 and the daemon recovers when it returns",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  const std::string before = http.post("/v1/jobs", {{"name", "kept"}}).value()["id"];

  redis.stop();
  auto down = http.post("/v1/jobs", {{"name", "n"}});
  CHECK(down.status == 503);
  CHECK(down.value()["error"] == "unavailable");
  CHECK(down.header("retry-after") == "1");
  CHECK(http.get("/v1/jobs/" + before).status == 503);
  CHECK(http.get("/readyz").status == 503);
  CHECK(http.get("/healthz").status == 200);

  redis.start();
  REQUIRE(wait_until([&] { return daemon.ready(); }, 10s));
  CHECK(http.get("/v1/jobs/" + before).value()["state"] == "queued");  // nothing lost
  CHECK(http.post("/v1/jobs", {{"name", "after"}}).status == 201);
  CHECK(daemon.wait_exit(0ms) == std::nullopt);  // never crashed
}

// A failover that moves the primary's name (a DNS name, a VIP; here a socket path's link) and
// demotes the old primary, which keeps its clients: the master must not stay on it for ever.
TEST_CASE("a Redis that became a replica is left for the primary its address names by then",
          "[http]") {
  if (jq::test::redis_cluster_mode()) return;  // REPLICAOF is refused in cluster mode
  TempDir sockets;
  RedisServer a({"--unixsocket", sockets.file("a.sock")});
  RedisServer b({"--unixsocket", sockets.file("b.sock")});
  const std::string link = sockets.file("redis.sock");
  std::filesystem::create_symlink(sockets.file("a.sock"), link);
  Daemon daemon({"unix://" + link});
  auto http = daemon.http();
  REQUIRE(http.post("/v1/jobs", {{"name", "n"}}).status == 201);

  // B takes over: the name leads to it, and A follows it as a replica.
  std::filesystem::create_symlink(sockets.file("b.sock"), link + ".new");
  std::filesystem::rename(link + ".new", link);
  REQUIRE(SyncRedis(a.port()).call({"REPLICAOF", "127.0.0.1", std::to_string(b.port())}).str ==
          "OK");
  // Refused by the replica, or while the master waits to connect again.
  CHECK(http.post("/v1/jobs", {{"name", "n"}}).status == 503);
  // The master connects again (to B, where the name leads now) and pushes succeed there.
  REQUIRE(wait_until([&] { return http.post("/v1/jobs", {{"name", "n"}}).status == 201; }, 10s));
  CHECK(http.get("/readyz").status == 200);
  CHECK(SyncRedis(b.port()).call({"DBSIZE"}).integer > 0);
}

// A replica answers PING: readiness must still say that no write can succeed.
TEST_CASE("/readyz answers 503 while Redis is a replica", "[http]") {
  if (jq::test::redis_cluster_mode()) return;  // REPLICAOF is refused in cluster mode
  RedisServer primary;
  RedisServer replica;
  Daemon daemon({replica.url()});
  auto http = daemon.http();
  REQUIRE(http.get("/readyz").status == 200);
  REQUIRE(SyncRedis(replica.port())
              .call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())})
              .str == "OK");
  const auto ready = http.get("/readyz");
  CHECK(ready.status == 503);
  CHECK_THAT(ready.value()["message"].get<std::string>(), Catch::Contains("replica"));
}

// The events connection only listens: with nothing in flight, a Redis gone without a word (a
// host lost, a NAT that dropped the idle connection) went unnoticed, and the master never heard
// another event (results by other masters, registrations, pauses, schedule changes).
TEST_CASE("an events connection that stops answering is made again", "[http]") {
  RedisServer redis;
  jq::test::TcpForwarder forwarder(redis.port());
  forwarder.watch("SSUBSCRIBE");
  Daemon daemon({through(forwarder)});
  REQUIRE(wait_until([&] { return forwarder.watched() == 1; }, 5s));
  forwarder.silence_watched();
  // A PING every 5 s, and the watchdog's 10 s: a new subscription within 15 s and a reconnect.
  CHECK(wait_until([&] { return forwarder.watched() == 2; }, 25s));
  CHECK(daemon.http().post("/v1/jobs", {{"name", "n"}}).status == 201);
}

// A lease of a worker's slots is a counter in Redis that each master adds to and takes from: an
// acquire that ran but whose answer was lost kept the slot leased for ever, and a worker of
// concurrency 1 got no job again, from any master.
TEST_CASE("a slot lease whose answer was lost is put right, and the worker gets its jobs",
          "[http]") {
  RedisServer redis;
  jq::test::TcpForwarder forwarder(redis.port());
  Daemon daemon({through(forwarder)});
  auto http = daemon.http();
  forwarder.replace_answer("acquireSlots", "-ERR upstream timed out\r\n");
  Worker worker;
  jq::test::register_worker(http, worker, {"n"}, 1);
  jq::test::push(http, {{"name", "n"}});
  REQUIRE(wait_until([&] { return forwarder.replaced() == 1; }, 10s));
  CHECK(wait_until([&] { return worker.stats()["received"] == 1; }, 10s));
  jq::test::push(http, {{"name", "n"}});
  CHECK(wait_until([&] { return worker.stats()["received"] == 2; }, 10s));
}

// A reservation runs in Redis and takes its jobs (running, their attempt counted): one whose
// answer was lost (a proxy's timeout, a connection broken meanwhile) left them there, sent to no
// worker, until the reaper counted the attempt as timed out after the deadline. With max_retry 0
// the job was dead without having run.
TEST_CASE("the jobs of a reservation whose answer was lost run at once, their attempt not counted",
          "[http]") {
  RedisServer redis;
  jq::test::TcpForwarder forwarder(redis.port());
  Daemon daemon({through(forwarder)});
  auto http = daemon.http();
  // Pushed before a worker is there: it waits for a reservation (a push that finds a worker
  // free is taken by the push itself).
  const std::string id = jq::test::push(
      http, {{"name", "n"}, {"max_retry", 0}, {"timeout", 30}, {"keep_result", true}});
  forwarder.replace_answer("reserveJobs", "-ERR upstream timed out\r\n");
  Worker worker;
  jq::test::register_worker(http, worker, {"n"}, 1);
  REQUIRE(wait_until([&] { return forwarder.replaced() == 1; }, 10s));
  CHECK(wait_until([&] { return worker.stats()["received"] == 1; }, 10s));
  const auto job = [&] { return http.get("/v1/jobs/" + id).value(); };
  CHECK(wait_until([&] { return job()["state"] == "succeeded"; }, 5s));
  CHECK(job()["attempts"] == 1);
  CHECK(daemon.logged("whose answer was lost go back to their queues", 1s));
}

// A push that finds room at a worker takes its job at once (pushJobs stores it running, its
// attempt counted): one whose answer was lost left the job running, sent to no worker, until
// the reaper counted a timed-out attempt after its deadline (dead with max_retry 0).
TEST_CASE("a job a push took at once, its answer lost, runs with its attempt not counted",
          "[http]") {
  RedisServer redis;
  jq::test::TcpForwarder forwarder(redis.port());
  Daemon daemon({through(forwarder)});
  auto http = daemon.http();
  Worker worker;
  jq::test::register_worker(http, worker, {"n"}, 1);
  const auto job = [&](const std::string& id) { return http.get("/v1/jobs/" + id).value(); };
  // A first attempt's answer lets the master reckon room ahead of the worker; while the second
  // runs, a push is taken at once to wait there (as in dispatch_test).
  const std::string quick = jq::test::push(http, {{"name", "n"}, {"keep_result", true}});
  REQUIRE(wait_until([&] { return job(quick)["state"] == "succeeded"; }, 5s));
  const std::string slow = jq::test::push(http, {{"name", "n"}, {"argument", {{"sleep_ms", 600}}}});
  REQUIRE(wait_until([&] { return job(slow)["state"] == "running"; }, 5s));
  forwarder.replace_answer("pushJobs", "-ERR upstream timed out\r\n");
  const auto lost = http.post(
      "/v1/jobs", {{"name", "n"}, {"max_retry", 0}, {"timeout", 30}, {"keep_result", true}});
  CHECK(lost.status >= 500);  // the pusher hears the push failed
  REQUIRE(forwarder.replaced() == 1);
  CHECK(daemon.logged("pushes taking them at once) whose answer was lost", 5s));
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 3; }, 10s));
  const std::string id = worker.stats()["order"][2];
  CHECK(wait_until([&] { return job(id)["state"] == "succeeded"; }, 5s));
  CHECK(job(id)["attempts"] == 1);
}

// A job its worker refused (busy) goes back to its queue, its attempt not counted. A release
// Redis did not take (a connection lost, Redis loading after a restart) was sent once: the job
// stayed running until the reaper counted a timeout.
TEST_CASE("a release Redis did not take is sent again, and the job waits in its queue", "[http]") {
  RedisServer redis;
  jq::test::TcpForwarder forwarder(redis.port());
  Daemon daemon({through(forwarder)});
  auto http = daemon.http();
  Worker worker;
  jq::test::register_worker(http, worker, {"n"}, 1);
  forwarder.refuse("releaseJob", "-LOADING Redis is loading the dataset in memory\r\n", 1);
  const std::string id = push_refused(http);
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 1; }, 5s));
  const auto job = [&] { return http.get("/v1/jobs/" + id).value(); };
  CHECK(wait_until([&] { return job()["state"] == "queued"; }, 5s));
  CHECK(forwarder.refused() == 1);
  CHECK(job()["attempts"] == 0);
}

// A constrained job its worker refused gives its constraint leases back first, then goes back to
// its queue. A lease release Redis did not take was sent once, and the job was not given back:
// it stayed running (and counted against its constraint) until the reaper ended its attempt.
TEST_CASE("a release whose constraint leases Redis did not take is sent again", "[http]") {
  RedisServer redis;
  jq::test::TcpForwarder forwarder(redis.port());
  Daemon daemon({through(forwarder)});
  auto http = daemon.http();
  Worker worker;
  constrained_worker(http, worker);
  forwarder.refuse("releaseLeases", "-LOADING Redis is loading the dataset in memory\r\n", 1);
  const std::string id = push_refused(http);
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 1; }, 5s));
  const auto job = [&] { return http.get("/v1/jobs/" + id).value(); };
  CHECK(wait_until([&] { return job()["state"] == "queued"; }, 5s));
  CHECK(forwarder.refused() == 1);
  CHECK(job()["attempts"] == 0);
  CHECK(http.get("/v1/constraints/one").value()["running"] == 0);
}

// A lease release whose answer was lost may still run later (a proxy passes it on after its
// timeout): the job given back and reserved again under the same attempt number would then lose
// that attempt's lease to it. Such a job is not given back: the reaper ends its attempt.
TEST_CASE("a release whose constraint leases' answer was lost leaves the job to the reaper",
          "[http]") {
  RedisServer redis;
  jq::test::TcpForwarder forwarder(redis.port());
  Daemon daemon({through(forwarder)});
  auto http = daemon.http();
  Worker worker;
  constrained_worker(http, worker);
  forwarder.replace_answer("releaseLeases", "-ERR upstream timed out\r\n");
  const std::string id = push_refused(http);
  REQUIRE(wait_until([&] { return forwarder.replaced() == 1; }, 5s));
  CHECK(daemon.logged("job " + id + ": not released", 5s));
  const json job = http.get("/v1/jobs/" + id).value();
  CHECK(job["state"] == "running");
  CHECK(job["attempts"] == 1);
}

// A worker's answer that came while Redis could not take it (a restart, a failover, a broken
// connection, -LOADING) was dropped: the job stayed running until its deadline and then counted a
// timeout, dead without retries left, though the worker had answered.
TEST_CASE("a worker's answer that comes while Redis is away is recorded once it is back",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  Worker worker;
  jq::test::register_worker(http, worker, {"n"}, 1);
  // Far ahead: without the answer the reaper would end the job only after 22 s.
  json job = {{"name", "n"},
              {"max_retry", 0},
              {"timeout", 20},
              {"keep_result", true},
              {"argument", {{"sleep_ms", 1500}}}};  // Redis is down before it answers
  std::string state = "succeeded", type = "success";
  SECTION("a success") {}
  SECTION("a failure") {
    job["argument"]["fail"] = true;
    state = "dead";
    type = "failure";
  }
  const std::string id = jq::test::push(http, job);
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 1; }, 5s));
  redis.stop();
  REQUIRE(daemon.logged("is not recorded yet", 5s));  // the answer came meanwhile
  redis.start();
  CHECK(wait_until([&] { return http.get("/v1/jobs/" + id).value()["state"] == state; }, 8s));
  CHECK(http.get("/v1/jobs/" + id + "/result").value()["type"] == type);
  CHECK(worker.stats()["received"] == 1);
}

// A retry waits in the scheduled set until the promoter makes it ready. A promotion that failed
// (a moment's error) was looked at again only by the 5 s net, so the retry ran seconds late.
TEST_CASE("a promotion that failed is tried again soon, not after the 5 s net", "[http]") {
  RedisServer redis;
  jq::test::TcpForwarder forwarder(redis.port());
  Daemon daemon({through(forwarder), 1, "retry:\n  base: 1\n  max: 1\n  jitter: 0\n"});
  auto http = daemon.http();
  Worker worker;
  jq::test::register_worker(http, worker, {"n"}, 1);
  const std::string id =
      jq::test::push(http, {{"name", "n"}, {"argument", {{"fail_until", 2}}}, {"max_retry", 1}});
  const auto state = [&] { return http.get("/v1/jobs/" + id).value()["state"]; };
  REQUIRE(wait_until([&] { return state() == "scheduled"; }, 5s));  // its retry, 1 s ahead
  forwarder.refuse("promoteJobs", "-ERR upstream timed out\r\n", 1);
  const auto failed_at = std::chrono::steady_clock::now();
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 2; }, 10s));  // the retry
  CHECK(forwarder.refused() == 1);
  CHECK(std::chrono::steady_clock::now() - failed_at < 3s);
}

TEST_CASE("a script library flushed from Redis is loaded again (FUNCTION FLUSH)", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  REQUIRE(SyncRedis(redis.port()).call({"FUNCTION", "FLUSH"}).str == "OK");
  auto pushed = http.post("/v1/jobs", {{"name", "n"}});
  REQUIRE(pushed.status == 201);
  const std::string id = pushed.value()["id"];
  REQUIRE(SyncRedis(redis.port()).call({"FUNCTION", "FLUSH"}).str == "OK");
  CHECK(http.get("/v1/jobs/" + id).status == 200);
  CHECK(daemon.log().find("loading it again") != std::string::npos);
}

TEST_CASE("a master deletes the script library of a build no master has run for long", "[http]") {
  RedisServer redis;
  SyncRedis r(redis.port());
  const std::string old = "jq_01dbad000001";
  REQUIRE(r.call({"FUNCTION", "LOAD", jq::test::minimal_library_source(old)}).str == old);
  // Its masters' last heartbeat ran out in 1970: far more than ten minutes ago.
  const jq::redis::Keys keys;
  r.call({"ZADD", keys.libraries(), "1", old});
  Daemon daemon({redis.url()});
  CHECK(wait_until(
      [&] {
        return r.call({"FUNCTION", "LIST", "LIBRARYNAME", old}).elements.empty();
      },
      10s));
  CHECK(r.call({"ZSCORE", keys.libraries(), old}).is_nil());
  // This master's own library is recorded, and stays.
  const std::string own(jq::redis::library_name());
  CHECK_FALSE(r.call({"ZSCORE", keys.libraries(), own}).is_nil());
  CHECK(r.call({"FUNCTION", "LIST", "LIBRARYNAME", own}).elements.size() == 1);
  CHECK(daemon.log().find("deleted the script library " + old) != std::string::npos);
}

TEST_CASE("a Redis user that may not run FUNCTION is told what to grant", "[http]") {
  RedisServer redis;
  REQUIRE(SyncRedis(redis.port())
              .call({"ACL", "SETUSER", "jq", "on", ">secret", "~*", "&*", "+@all", "-function"})
              .str == "OK");
  Daemon daemon({.redis_url = "redis://jq:secret@127.0.0.1:" + std::to_string(redis.port()) + "/0",
                 .wait_ready = false});
  CHECK(daemon.logged("give jqmaster's Redis user FUNCTION LIST, FUNCTION LOAD and FCALL", 10s));
  CHECK(daemon.http().get("/readyz").status == 503);
}

TEST_CASE("a push that no replica confirms in time answers 503, and its job is kept and runs",
          "[http]") {
  // A Redis without replicas: WAIT 1 never confirms. The contract: 503 saying so, the job kept
  // (a push again would store it twice, the documented at-least-once case).
  RedisServer redis;
  Daemon daemon(
      {.redis_url = redis.url(), .redis_yaml = "  replicas_ack: 1\n  replicas_ack_timeout: 0.2\n"});
  auto http = daemon.http();
  const auto sent = std::chrono::steady_clock::now();
  auto pushed = http.post("/v1/jobs", {{"name", "kept"}, {"argument", {{"n", 7}}}});
  CHECK(std::chrono::steady_clock::now() - sent >= 200ms);  // it waited for the replicas
  REQUIRE(pushed.status == 503);
  CHECK(pushed.value()["message"].get<std::string>().find(
            "were stored, but fewer Redis replicas than redis.replicas_ack") != std::string::npos);
  // With the script library gone, the push and its WAIT go again after the library.
  REQUIRE(SyncRedis(redis.port()).call({"FUNCTION", "FLUSH"}).str == "OK");
  auto again = http.post("/v1/jobs", {{"name", "kept"}, {"argument", {{"n", 8}}}});
  REQUIRE(again.status == 503);
  CHECK(again.value()["message"].get<std::string>().find(
            "were stored, but fewer Redis replicas than redis.replicas_ack") != std::string::npos);
  CHECK(daemon.log().find("loading it again") != std::string::npos);
  // Keyed jobs of several shards go in one transaction, with the same WAIT after it (and again
  // after the library).
  REQUIRE(SyncRedis(redis.port()).call({"FUNCTION", "FLUSH"}).str == "OK");
  const auto keys = jq::test::keys_in_different_shards(2, 4);
  auto across = http.post("/v1/jobs", json::array({{{"name", "kept"}, {"unique_key", keys[0]}},
                                                   {{"name", "kept"}, {"unique_key", keys[1]}}}));
  REQUIRE(across.status == 503);
  CHECK(across.value()["message"].get<std::string>().find(
            "were stored, but fewer Redis replicas than redis.replicas_ack") != std::string::npos);
  Worker worker;
  jq::test::register_worker(http, worker, {"kept"}, 1);
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 4; }, 10s));
}

TEST_CASE("a push waiting for its replicas holds up neither the dispatch nor other requests",
          "[http]") {
  // WAIT holds the connection it goes on for its whole timeout while Redis has fewer replicas
  // than asked (right after a failover promoted the only one). The job it waits for is stored:
  // a worker gets it, and other requests are answered, meanwhile.
  RedisServer redis;
  Daemon daemon(
      {.redis_url = redis.url(), .redis_yaml = "  replicas_ack: 1\n  replicas_ack_timeout: 4\n"});
  Worker worker;
  jq::test::register_worker(daemon.http(), worker, {"flow"}, 1);
  const auto sent = std::chrono::steady_clock::now();
  auto push = std::async(std::launch::async, [&] {
    return daemon.http().post("/v1/jobs", {{"name", "flow"}});
  });
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 1; }, 10s));
  const auto received = std::chrono::steady_clock::now() - sent;
  CHECK(daemon.http().get("/v1/stats").status == 200);
  const auto stats_answered = std::chrono::steady_clock::now() - sent;
  const auto pushed = push.get();
  CHECK(pushed.status == 503);
  CHECK(std::chrono::steady_clock::now() - sent >= 4s);  // it did wait for the replicas
  CHECK(received < 2s);
  CHECK(stats_answered < 2s);
}

// A stop in the middle of a backlog: what was on its way at a worker ends and is recorded, what
// was reserved but not started goes back to its queue, and the next master runs the rest. Each
// job once: none is lost, none runs twice.
TEST_CASE("SIGTERM during a busy dispatch loses no job and runs none twice", "[http]") {
  RedisServer redis;
  Worker worker;
  Daemon first({.redis_url = redis.url()});
  json batch = json::array();
  for (int i = 0; i < 300; ++i)
    batch.push_back({{"name", "busy"}, {"argument", {{"sleep_ms", 5}}}});
  REQUIRE(first.http().post("/v1/jobs", batch).status == 201);
  jq::test::register_worker(first.http(), worker, {"busy"}, 16);
  REQUIRE(wait_until([&] { return worker.stats()["received"].get<int>() >= 48; }, 10s));
  REQUIRE(first.stop(SIGTERM, 15s) == 0);
  const int before = worker.stats()["received"].get<int>();
  CHECK(before < 300);

  Daemon second({.redis_url = redis.url()});
  jq::test::register_worker(second.http(), worker, {"busy"}, 16);
  REQUIRE(wait_until([&] { return worker.stats()["received"].get<int>() >= 300; }, 20s));
  const json by_job = worker.stats()["by_job"];
  CHECK(by_job.size() == 300);
  for (const auto& [id, attempts] : by_job.items()) {
    INFO(id);
    CHECK(attempts == json::array({1}));  // started once, as its first attempt
  }
  REQUIRE(wait_until(
      [&] { return second.http().get("/v1/stats").value()["succeeded"].get<int>() == 300; }, 10s));
}

TEST_CASE("a long poll answered during shutdown says Connection: close", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  const std::string id =
      daemon.http().post("/v1/jobs", {{"name", "n"}, {"keep_result", true}}).value()["id"];
  jq::test::RawConnection poll(daemon.port());
  REQUIRE(poll.send("GET /v1/jobs/" + id + "/result?wait=2 HTTP/1.1\r\nHost: x\r\n\r\n"));
  // The poll counts itself in Redis (<p>:{s}:watch:<field>) once it waits.
  SyncRedis r(redis.port());
  REQUIRE(wait_until([&] { return !r.call({"KEYS", "*:watch:*"}).elements.empty(); }, 5s));
  // The poll is waiting when the shutdown begins; its answer comes after, and must not promise
  // a connection that is about to close.
  REQUIRE(::kill(daemon.pid(), SIGTERM) == 0);
  bool closed = false;
  const std::string answer = poll.read_until_closed(10s, &closed);
  CHECK(answer.starts_with("HTTP/1.1 "));
  CHECK(answer.find("Connection: close") != std::string::npos);
  CHECK(daemon.wait_exit(15s) == 0);
}

// A rolling restart while a client long-polls for a job that is still queued: the poll answers
// at once ("still pending", and the connection closes), rather than holding the shutdown for its
// whole grace and then closing without a word.
TEST_CASE("SIGTERM answers a long poll at once, and does not wait out its wait", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  const std::string id =
      daemon.http().post("/v1/jobs", {{"name", "n"}, {"keep_result", true}}).value()["id"];
  jq::test::RawConnection poll(daemon.port());
  REQUIRE(poll.send("GET /v1/jobs/" + id + "/result?wait=60 HTTP/1.1\r\nHost: x\r\n\r\n"));
  SyncRedis r(redis.port());
  REQUIRE(wait_until([&] { return !r.call({"KEYS", "*:watch:*"}).elements.empty(); }, 5s));
  const auto began = std::chrono::steady_clock::now();
  REQUIRE(::kill(daemon.pid(), SIGTERM) == 0);
  bool closed = false;
  const std::string answer = poll.read_until_closed(20s, &closed);
  CHECK(answer.starts_with("HTTP/1.1 202 "));
  CHECK(answer.find("Connection: close") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - began < 5s);  // shutdown_grace is 10 s
  CHECK(daemon.wait_exit(15s) == 0);
  CHECK(std::chrono::steady_clock::now() - began < 5s);
}

// A reservation on its way when the master stops, its answer lost (the connection hangs until
// the command times out): the scheduler no longer steps, so nothing looked for its job, which
// stayed running, sent to no worker, until a reaper ended its attempt after the deadline.
TEST_CASE("a master stopping gives back the jobs of a reservation whose answer was lost",
          "[http]") {
  RedisServer redis;
  std::optional<jq::test::Worker> worker;
  std::string id;
  {
    jq::test::TcpForwarder forwarder(redis.port());
    Daemon daemon({through(forwarder), 4, "shutdown_grace: 30\n"});
    auto http = daemon.http();
    id = jq::test::push(http,
                        {{"name", "n"}, {"max_retry", 0}, {"timeout", 300}, {"keep_result", true}});
    forwarder.silence_after("reserveJobs");
    worker.emplace();
    jq::test::register_worker(http, *worker, {"n"}, 1);
    REQUIRE(wait_until([&] { return forwarder.silenced() == 1; }, 10s));
    CHECK(daemon.stop(SIGTERM, 40s) == 0);
    CHECK(daemon.logged("go back to their queues before the stop", 0ms));
    CHECK(worker->stats()["received"] == 0);
  }
  // The next master runs it at once, its attempt not counted (not after the 300 s deadline).
  Daemon next({redis.url()});
  auto http = next.http();
  CHECK(wait_until([&] { return worker->stats()["received"] == 1; }, 10s));
  const auto job = [&] { return http.get("/v1/jobs/" + id).value(); };
  CHECK(wait_until([&] { return job()["state"] == "succeeded"; }, 5s));
  CHECK(job()["attempts"] == 1);
}

TEST_CASE("SIGTERM stops the daemon cleanly with exit code 0", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  CHECK(daemon.http().post("/v1/jobs", {{"name", "n"}}).status == 201);
  CHECK(daemon.stop(SIGTERM, 15s) == 0);
  CHECK(daemon.log().find("jqmaster stopped") != std::string::npos);
}

// Ctrl-C twice: the first waits for the running attempt (shutdown_grace), the second does not.
TEST_CASE("a second SIGINT stops at once what the first stops in order", "[http]") {
  RedisServer redis;
  Worker worker;
  Daemon daemon({redis.url(), 4, "shutdown_grace: 60\n"});
  jq::test::register_worker(daemon.http(), worker, {"slow"}, 1);
  REQUIRE(daemon.http()
              .post("/v1/jobs",
                    {{"name", "slow"}, {"timeout", 120}, {"argument", {{"sleep_ms", 60000}}}})
              .status == 201);
  REQUIRE(wait_until([&] { return worker.stats()["received"].get<int>() == 1; }, 10s));
  kill(daemon.pid(), SIGTERM);
  REQUIRE(daemon.logged("shutting down", 10s));
  CHECK_FALSE(daemon.wait_exit(300ms).has_value());  // the attempt has a minute to finish
  const auto began = std::chrono::steady_clock::now();
  kill(daemon.pid(), SIGINT);
  const auto code = daemon.wait_exit(10s);
  REQUIRE(code.has_value());
  CHECK(*code == 1);
  CHECK(std::chrono::steady_clock::now() - began < 5s);
  CHECK(daemon.log().find("received SIGINT again: stopping at once") != std::string::npos);
}

// A wrong password is a refusal the operator must fix, not a malformed reply: the log and
// /readyz say what Redis answered and what to check, while the master goes on trying.
TEST_CASE("a wrong Redis password is reported as a refused set-up, naming what to check",
          "[http]") {
  RedisServer redis({"--user", "jq", "on", ">right-password", "~*", "&*", "+@all"});
  std::string url = redis.url();
  url.insert(url.find("//") + 2, "jq:wrong-password@");
  Daemon daemon({.redis_url = url, .wait_ready = false});
  CHECK(daemon.logged("Redis refused the connection set-up: WRONGPASS", 10s));
  CHECK(daemon.logged("check redis.url's password", 10s));
  CHECK(daemon.log().find("malformed") == std::string::npos);
  CHECK(daemon.http().get("/readyz").status == 503);
}
