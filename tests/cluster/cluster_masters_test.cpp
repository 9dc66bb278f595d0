// Several jqmaster processes on a real Redis Cluster (3 masters + 3 replicas): the contract's
// guarantees across shards that live on different nodes, and faults during a run of 20,000
// trivial jobs (a Redis master killed, a live reshard, a jqmaster killed) with the accounting
// afterwards. Each test has its own cluster (a failover changes it for good).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <climits>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>

#include "src/redis/keys.hpp"
#include "src/redis/slot.hpp"
#include "src/store/job_routing.hpp"
#include "src/util/time.hpp"
#include "tests/cluster/cluster_support.hpp"
#include "tests/support/daemon.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/worker.hpp"
#include "tests/support/worker_journal.hpp"

namespace jq::test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kShards = 16;
constexpr int kJobs = 20'000;  // the figure
constexpr int kBatch = 100;    // jobs per push
constexpr int kPushers = 4;
constexpr int kFaultAt = 6'000;  // acknowledged jobs before the fault
// Fast retries and reaping: a job whose attempt a fault cut off runs again within seconds.
const std::string kYaml = "retry:\n  base: 0.05\n  max: 0.5\n  jitter: 0\n";

DaemonOptions on(const RedisCluster& cluster, const std::string& redis_yaml = "") {
  DaemonOptions o{cluster.url(), kShards, kYaml};
  o.redis_yaml = redis_yaml;
  return o;
}

void register_worker(const HttpClient& http, const std::string& url, int concurrency) {
  const json body = {{"url", url}, {"names", {"*"}}, {"concurrency", concurrency}};
  const auto res = http.post("/v1/workers", body);
  REQUIRE((res.status == 201 || res.status == 200));
}

// Kills a master (not the one of the workers' slot, {w}: registrations would wait for it) and its
// replica; the options of a jqmaster started meanwhile (not ready while a node is down: /readyz
// says so).
DaemonOptions with_a_node_down(RedisCluster& cluster) {
  const std::uint16_t workers_node = cluster.master_of(redis::key_slot("{w}"));
  const std::vector<std::uint16_t> masters = cluster.masters();
  const std::uint16_t gone = masters.front() != workers_node ? masters.front() : masters.back();
  cluster.kill(cluster.replica_of(gone));
  cluster.kill(gone);
  DaemonOptions o = on(cluster);
  o.wait_ready = false;
  return o;
}

// How many clients the node on `port` has subscribed to the sharded channel (-1: no answer).
long long shard_listeners(std::uint16_t port, const std::string& channel) {
  const redis::Reply r = SyncRedis(port).call({"PUBSUB", "SHARDNUMSUB", channel});
  return r.elements.size() == 2 ? r.elements[1].integer : -1;
}

json stats(const HttpClient& http) {
  try {
    const HttpResult res = http.get("/v1/stats");
    if (res.status == 200) return res.value();
  } catch (const std::exception&) {
  }
  return nullptr;
}

// Pushes kJobs trivial jobs in batches from kPushers threads, each batch to the next master that
// answers; a batch not answered 201 is pushed again (the first try may have stored it: then it
// exists twice, the documented at-least-once case). Only ids answered 201 count as acknowledged.
class Run {
 public:
  explicit Run(std::vector<std::uint16_t> masters) : masters_(std::move(masters)) {}

  void start() {
    for (int p = 0; p < kPushers; ++p) threads_.emplace_back([this, p] { push_loop(p); });
  }
  void join() {
    for (auto& t : threads_) t.join();
  }
  // A master that is gone: pushers stop using it.
  void drop_master(std::uint16_t port) {
    std::lock_guard lock(mutex_);
    std::erase(masters_, port);
  }
  std::size_t acknowledged() const {
    std::lock_guard lock(mutex_);
    return ids_.size();
  }
  std::vector<std::string> ids() const {
    std::lock_guard lock(mutex_);
    return ids_;
  }
  int refused() const { return refused_; }
  bool gave_up() const { return gave_up_; }

 private:
  void push_loop(int pusher) {
    json batch = json::array();
    for (int i = 0; i < kBatch; ++i) batch.push_back({{"name", "c"}, {"timeout", 2}});
    for (int n = pusher; n * kBatch < kJobs; n += kPushers) {
      for (int attempt = 0;; ++attempt) {
        const std::uint16_t port = master(n + attempt);
        std::optional<json> ids;
        try {
          const HttpResult res = HttpClient(port).post("/v1/jobs", batch);
          if (res.status == 201) ids = res.value()["ids"];
        } catch (const std::exception&) {
        }
        if (ids) {
          std::lock_guard lock(mutex_);
          for (const auto& id : *ids) ids_.push_back(id.get<std::string>());
          break;
        }
        ++refused_;
        if (attempt >= 500) {  // 10 s of refusals: give up (Catch2 asserts only on its thread)
          gave_up_ = true;
          return;
        }
        std::this_thread::sleep_for(20ms);
      }
    }
  }
  std::uint16_t master(int n) const {
    std::lock_guard lock(mutex_);
    return masters_[static_cast<std::size_t>(n) % masters_.size()];
  }

  mutable std::mutex mutex_;
  std::vector<std::uint16_t> masters_;
  std::vector<std::string> ids_;
  std::atomic<int> refused_{0};
  std::atomic<bool> gave_up_{false};
  std::vector<std::thread> threads_;
};

struct Accounting {
  long long pushed = 0, succeeded = 0, dead = 0, ready = 0, scheduled = 0, running = 0;
  std::size_t acknowledged = 0;
  std::vector<std::string> lost;  // acknowledged, never succeeded
  std::size_t reran = 0;          // succeeded more than once
};

// Waits until the store is drained, then sets what happened to every acknowledged job against
// the worker's journal.
Accounting account(const HttpClient& http, const Run& run, const std::string& journal_file,
                   std::chrono::seconds drain_within = 90s) {
  json s;
  const bool drained = wait_until(
      [&] {
        s = stats(http);
        return !s.is_null() && s["ready"] == 0 && s["scheduled"] == 0 && s["running"] == 0;
      },
      drain_within, 100ms);
  INFO("stats: " << s.dump());
  CHECK(drained);
  WorkerJournal journal;
  journal.add(read_file(journal_file));
  Accounting a;
  a.pushed = s["pushed"];
  a.succeeded = s["succeeded"];
  a.dead = s["dead"];
  a.ready = s["ready"];
  a.scheduled = s["scheduled"];
  a.running = s["running"];
  CHECK_FALSE(run.gave_up());
  const auto ids = run.ids();
  a.acknowledged = ids.size();
  for (const std::string& id : ids) {
    const auto found = journal.successes_by_job.find(id);
    if (found == journal.successes_by_job.end()) {
      a.lost.push_back(id);
    } else if (found->second > 1) {
      ++a.reran;
    }
  }
  std::cout << "accounting: acknowledged " << a.acknowledged << ", pushed " << a.pushed
            << " (pushes refused and repeated: " << run.refused() << "), succeeded " << a.succeeded
            << ", dead " << a.dead << ", ready " << a.ready << ", scheduled " << a.scheduled
            << ", running " << a.running << ", acknowledged and lost " << a.lost.size()
            << ", ran twice " << a.reran << std::endl;
  return a;
}

}  // namespace

TEST_CASE("on a cluster jobs run by priority across shards on different nodes", "[cluster]") {
  RedisCluster cluster;
  Daemon one(on(cluster)), two(on(cluster));
  const std::vector<long long> priorities = {5, INT_MIN, 0, 0, INT_MAX, -3, 0, 7, -3, 1};
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < priorities.size(); ++i) {
    const HttpClient http = i % 2 == 0 ? one.http() : two.http();
    const auto res = http.post("/v1/jobs", {{"name", "order"}, {"priority", priorities[i]}});
    REQUIRE(res.status == 201);
    ids.push_back(res.value()["id"]);
  }
  // Round robin over 16 shards: the jobs sit on all three nodes.
  std::set<std::uint16_t> nodes;
  for (const auto& id : ids) {
    const std::string shard = id.substr(0, id.find('-'));
    nodes.insert(cluster.master_of(redis::key_slot("{" + shard + "}")));
  }
  CHECK(nodes.size() == 3);
  Worker worker;
  register_worker(one.http(), worker.url(), 1);  // one at a time: arrival order is choice order
  REQUIRE(wait_until([&] { return worker.stats()["received"] == priorities.size(); }, 20s));
  const std::vector<std::string> expected = {ids[1], ids[5], ids[8], ids[2], ids[3],
                                             ids[6], ids[9], ids[0], ids[7], ids[4]};
  CHECK(worker.stats()["order"].get<std::vector<std::string>>() == expected);
}

TEST_CASE("on a cluster an endpoint's concurrency holds across three masters", "[cluster]") {
  RedisCluster cluster;
  Daemon a(on(cluster)), b(on(cluster)), c(on(cluster));
  Worker worker({"--threads", "2"});
  register_worker(a.http(), worker.url(), 3);
  json batch = json::array();
  for (int i = 0; i < 12; ++i) batch.push_back({{"name", "n"}, {"argument", {{"sleep_ms", 40}}}});
  for (const Daemon* d : {&a, &b, &c}) REQUIRE(d->http().post("/v1/jobs", batch).status == 201);
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 36; }, 30s));
  CHECK(worker.stats()["max_in_flight"] == 3);
}

TEST_CASE(
    "on a cluster a long poll on one master answers within 50 ms of a result stored on any "
    "node",
    "[cluster]") {
  RedisCluster cluster;
  Daemon one(on(cluster)), two(on(cluster));
  Worker worker;
  register_worker(one.http(), worker.url(), 4);
  std::set<std::uint16_t> nodes;
  for (int i = 0; i < 6; ++i) {  // round robin: shards on every node
    const auto pushed = two.http().post(
        "/v1/jobs", {{"name", "n"}, {"keep_result", true}, {"argument", {{"sleep_ms", 300}}}});
    REQUIRE(pushed.status == 201);
    const std::string id = pushed.value()["id"];
    nodes.insert(cluster.master_of(redis::key_slot("{" + id.substr(0, id.find('-')) + "}")));
    const auto res = one.http().get("/v1/jobs/" + id + "/result?wait=10");
    const auto answered_ms = epoch_ms(std::chrono::system_clock::now());
    REQUIRE(res.status == 200);
    const json result = res.value();
    REQUIRE(result["type"] == "success");
    // finished_at is when the worker answered (same machine clock).
    std::tm tm{};
    int millis = 0;
    const std::string at = result["finished_at"];
    REQUIRE(sscanf(at.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &millis) == 7);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    const long long finished_ms = static_cast<long long>(timegm(&tm)) * 1000 + millis;
    CHECK(answered_ms - finished_ms < 50);
  }
  CHECK(nodes.size() == 3);
}

// pushJobs merges in the shard of the unique_key (its keys, the constraint state's included,
// share that shard's slot): racing appends from two masters meet there one at a time.
TEST_CASE("on a cluster racing appends of one key over two masters make one job holding each once",
          "[cluster]") {
  RedisCluster cluster;
  Daemon one(on(cluster)), two(on(cluster));
  constexpr int kPushes = 20;
  std::atomic<int> other{0};  // neither made nor merged (Catch2 checks only on this thread)
  std::mutex ids_mutex;
  std::set<std::string> ids;
  std::vector<std::thread> pushers;
  for (int c = 0; c < 4; ++c) {
    pushers.emplace_back([&, c] {
      const HttpClient http = (c % 2 == 0 ? one : two).http();
      for (int i = c; i < kPushes; i += 4) {
        const auto res = http.post("/v1/jobs", {{"name", "account.sync"},
                                                {"argument", {{"change", i}}},
                                                {"unique_key", "account:7"},
                                                {"on_duplicate", "append"}});
        if (res.status != 201 && !(res.status == 200 && res.value()["merged"] == true)) ++other;
        std::lock_guard lock(ids_mutex);
        ids.insert(res.value().value("id", ""));
      }
    });
  }
  for (auto& t : pushers) t.join();
  CHECK(other == 0);
  REQUIRE(ids.size() == 1);
  // The job browser lists it with its argument (GET /v1/jobs/{id} has no argument).
  const auto listed = two.http().get("/v1/jobs?state=queued&name=account.sync");
  REQUIRE(listed.status == 200);
  REQUIRE(listed.value()["jobs"].size() == 1);
  const json job = listed.value()["jobs"][0];
  CHECK(job["id"] == *ids.begin());
  REQUIRE(job["argument"].is_array());
  std::vector<int> changes;
  for (const json& element : job["argument"]) changes.push_back(element["change"]);
  std::sort(changes.begin(), changes.end());
  std::vector<int> all(kPushes);
  for (int i = 0; i < kPushes; ++i) all[i] = i;
  CHECK(changes == all);  // each once, none lost
}

TEST_CASE(
    "on a cluster a constraint's concurrency is exact across two masters and shards on different "
    "nodes, while other jobs run",
    "[cluster]") {
  RedisCluster cluster;
  Daemon one(on(cluster)), two(on(cluster));
  const json constraint = {{"name", "per-tenant"},
                           {"match", {{"name", "mail"}}},
                           {"key", "/tenant"},
                           {"concurrency", 2}};
  const auto created = one.http().post("/v1/constraints", constraint);
  INFO(created.body);
  REQUIRE(created.status == 201);
  // The second master's pushes must match it too.
  REQUIRE(
      wait_until([&] { return two.http().get("/v1/constraints/per-tenant").status == 200; }, 10s));
  Worker mail({"--threads", "2"}), other;
  for (const auto& [url, name] :
       {std::pair{mail.url(), "mail"}, std::pair{other.url(), "report"}}) {
    const auto res =
        one.http().post("/v1/workers", {{"url", url}, {"names", {name}}, {"concurrency", 20}});
    REQUIRE((res.status == 201 || res.status == 200));
  }
  // 16 jobs of tenant a from each master, round robin over 16 shards: they sit on all three
  // nodes, and at most two run at once wherever they are.
  json batch = json::array();
  for (int i = 0; i < 16; ++i) {
    batch.push_back({{"name", "mail"}, {"argument", {{"tenant", "a"}, {"sleep_ms", 40}}}});
  }
  for (const Daemon* d : {&one, &two}) REQUIRE(d->http().post("/v1/jobs", batch).status == 201);
  // Held jobs never block others: reports run while tenant a waits.
  json reports = json::array();
  for (int i = 0; i < 8; ++i) reports.push_back({{"name", "report"}});
  REQUIRE(two.http().post("/v1/jobs", reports).status == 201);
  REQUIRE(wait_until([&] { return other.stats()["received"] == 8; }, 20s));
  const json state = two.http().get("/v1/constraints/per-tenant").value();
  INFO(state.dump());
  CHECK(state["waiting"].get<int>() > 0);  // summed over the shards of every node
  CHECK(state["running"].get<int>() <= 2);
  REQUIRE(wait_until([&] { return mail.stats()["received"] == 32; }, 60s));
  CHECK(mail.stats()["max_in_flight"] == 2);
  REQUIRE(wait_until(
      [&] {
        const json s = one.http().get("/v1/constraints/per-tenant").value();
        return s["waiting"] == 0 && s["running"] == 0;
      },
      10s));
}

TEST_CASE(
    "on a cluster a paused constraint holds its jobs in every shard, and deleting it lets them all "
    "run",
    "[cluster]") {
  RedisCluster cluster;
  Daemon one(on(cluster)), two(on(cluster));
  const json constraint = {
      {"name", "frozen"}, {"match", {{"name", "*"}}}, {"concurrency", 5}, {"paused", true}};
  REQUIRE(one.http().post("/v1/constraints", constraint).status == 201);
  // Once master two shows it, two's pushes match it (it loads what it shows), even before the
  // event from master one reaches it: its jobs below are held, not started.
  REQUIRE(wait_until([&] { return two.http().get("/v1/constraints/frozen").status == 200; }, 10s));
  Worker worker;
  register_worker(two.http(), worker.url(), 8);
  json batch = json::array();
  for (int i = 0; i < 12; ++i) batch.push_back({{"name", "n"}});
  REQUIRE(two.http().post("/v1/jobs", batch).status == 201);
  REQUIRE(wait_until(
      [&] { return one.http().get("/v1/constraints/frozen").value()["waiting"] == 12; }, 10s));
  CHECK(worker.stats()["received"] == 0);
  REQUIRE(one.http().del("/v1/constraints/frozen").status == 204);
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 12; }, 10s));
}

TEST_CASE("a Redis master killed during a run loses no job acknowledged with replicas_ack 1",
          "[cluster]") {
  RedisCluster cluster;
  Daemon one(on(cluster, "  replicas_ack: 1\n")), two(on(cluster, "  replicas_ack: 1\n"));
  TempDir dir;
  Worker worker({"--threads", "2", "--journal", dir.file("journal")});
  register_worker(one.http(), worker.url(), 64);
  Run run({one.port(), two.port()});
  run.start();
  REQUIRE(wait_until([&] { return run.acknowledged() >= kFaultAt; }, 60s, 10ms));
  const std::uint16_t victim = cluster.master_of(redis::key_slot("{0}"));
  const auto killed_at = Clock::now();
  cluster.kill(victim);
  REQUIRE(cluster.wait_ok(30s));
  std::cout
      << "failover: every slot served again "
      << std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - killed_at).count()
      << " ms after kill -9 of the master on port " << victim << std::endl;
  run.join();
  const Accounting a = account(one.http(), run, dir.file("journal"));
  CHECK(a.acknowledged == kJobs);
  CHECK(a.lost.empty());
  CHECK(a.pushed == a.succeeded + a.dead + a.ready + a.scheduled + a.running);
}

// Events go by sharded pub/sub, whose subscriptions live on the node serving the channel's slot:
// after a failover the master must subscribe again where the shard now lives, or its scheduler
// and its long polls would not hear that shard's events.
TEST_CASE("after a failover a master listens to the failed node's shard channels on its replica",
          "[cluster]") {
  RedisCluster cluster;
  Daemon master(on(cluster));
  const std::string channel = redis::Keys().events_channel(0);
  const std::uint16_t victim = cluster.master_of(redis::key_slot(channel));
  const std::uint16_t replica = cluster.replica_of(victim);
  auto listeners = [&](std::uint16_t port) { return shard_listeners(port, channel); };
  REQUIRE(wait_until([&] { return listeners(victim) == 1; }, 10s));
  CHECK(listeners(replica) == 0);
  cluster.kill(victim);
  REQUIRE(cluster.wait_ok(30s));
  REQUIRE(cluster.master_of(redis::key_slot(channel)) == replica);
  CHECK(wait_until([&] { return listeners(replica) == 1; }, 10s));
}

TEST_CASE("a Redis master killed during a run without replicas_ack: what is lost is counted",
          "[cluster]") {
  RedisCluster cluster;
  Daemon one(on(cluster)), two(on(cluster));
  TempDir dir;
  Worker worker({"--threads", "2", "--journal", dir.file("journal")});
  register_worker(one.http(), worker.url(), 64);
  Run run({one.port(), two.port()});
  run.start();
  REQUIRE(wait_until([&] { return run.acknowledged() >= kFaultAt; }, 60s, 10ms));
  cluster.kill(cluster.master_of(redis::key_slot("{0}")));
  REQUIRE(cluster.wait_ok(30s));
  run.join();
  const Accounting a = account(one.http(), run, dir.file("journal"));
  CHECK(a.acknowledged == kJobs);
  // Asynchronous replication: a push acknowledged just before the kill may not have reached the
  // replica. Reported, not required: the README quotes what runs like this one lose.
  std::cout << "without replicas_ack: " << a.lost.size() << " of " << a.acknowledged
            << " acknowledged jobs lost in the failover" << std::endl;
  CHECK(a.pushed == a.succeeded + a.dead + a.ready + a.scheduled + a.running);
}

TEST_CASE("a live reshard of slots holding jobs during a run loses nothing", "[cluster]") {
  RedisCluster cluster;
  Daemon one(on(cluster)), two(on(cluster));
  TempDir dir;
  Worker worker({"--threads", "2", "--journal", dir.file("journal")});
  register_worker(one.http(), worker.url(), 64);
  // The lowest shard slot of a master, and how many of its slots reach it (redis-cli moves a
  // master's slots from the lowest up).
  const std::uint16_t from = cluster.masters().front();
  const std::uint16_t to = cluster.masters().back();
  const std::vector<int> slots = cluster.slots_of(from);
  int shard_slot = 16384;
  int shard = -1;
  for (int s = 0; s < kShards; ++s) {
    const int slot = redis::key_slot("{" + std::to_string(s) + "}");
    if (std::find(slots.begin(), slots.end(), slot) != slots.end() && slot < shard_slot) {
      shard_slot = slot;
      shard = s;
    }
  }
  REQUIRE(shard_slot < 16384);
  const auto moved = std::find(slots.begin(), slots.end(), shard_slot) - slots.begin() + 1;
  Run run({one.port(), two.port()});
  run.start();
  REQUIRE(wait_until([&] { return run.acknowledged() >= kFaultAt; }, 60s, 10ms));
  ChildProcess reshard = cluster.reshard(from, to, static_cast<int>(moved));
  const auto code = reshard.wait(120s);
  REQUIRE(code == 0);
  CHECK(cluster.master_of(shard_slot) == to);
  run.join();
  const Accounting a = account(one.http(), run, dir.file("journal"));
  CHECK(a.acknowledged == kJobs);
  CHECK(a.lost.empty());
  CHECK(a.pushed == a.succeeded + a.dead + a.ready + a.scheduled + a.running);
  // Both masters listen to the moved shard's events where its slot now lives (Redis dropped
  // their subscriptions on the old node when the slot left it).
  const std::string channel = redis::Keys().events_channel(shard);
  CHECK(wait_until([&] { return shard_listeners(to, channel) == 2; }, 10s));
}

// A master and its replica both gone: their slots have no node. Commands for them are retried
// with a backoff (a node refusing connections, then CLUSTERDOWN once the others mark it failed),
// a bounded number of times, then the request gets 503; the other shards go on serving.
TEST_CASE("on a cluster, pushes to slots no node serves get 503 after bounded retries, others 201",
          "[cluster]") {
  RedisCluster cluster;
  Daemon master(on(cluster));
  auto http = master.http();
  const std::uint16_t gone = cluster.masters().front();
  const std::uint16_t its_replica = cluster.replica_of(gone);
  const std::vector<int> gone_slots = cluster.slots_of(gone);
  cluster.kill(its_replica);
  cluster.kill(gone);
  int served = 0, refused = 0;
  for (int i = 0; i < kShards; ++i) {  // round robin: one push per shard
    const auto sent = Clock::now();
    const auto res = http.post("/v1/jobs", {{"name", "n"}});
    const auto took = Clock::now() - sent;
    INFO("push " << i << " answered " << res.status << " after "
                 << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
    if (res.status == 201) {
      ++served;
      const std::string id = res.value()["id"];
      const int slot = redis::key_slot("{" + id.substr(0, id.find('-')) + "}");
      CHECK_FALSE(std::binary_search(gone_slots.begin(), gone_slots.end(), slot));
    } else {
      ++refused;
      CHECK(res.status == 503);
      CHECK(res.header("retry-after") != "");
      CHECK(took >= 1s);  // retried with a backoff first,
      CHECK(took < 10s);  // a bounded number of times (about 2.6 s)
    }
  }
  CHECK(served > 0);
  CHECK(refused > 0);
  CHECK(served + refused == kShards);
}

// A failing node stops only its own shards' jobs (README "Scaling out"): the scheduler read the
// heads of every shard in one call, which failed whole with the node down (the live nodes'
// answers thrown away), and each fill stopped there: no job ran, those the live nodes had stored
// (201) included.
TEST_CASE("on a cluster, jobs stored on live nodes run while another node is down", "[cluster]") {
  RedisCluster cluster;
  Daemon master(with_a_node_down(cluster));
  auto http = master.http();
  // Pushed while no worker is known: they wait in their queues, and only a read of the heads
  // finds them (a push to a worker with a free slot skips the queue).
  std::vector<std::string> stored;
  REQUIRE(wait_until(
      [&] {
        const auto res = http.post("/v1/jobs", {{"name", "n"}});
        if (res.status == 201) stored.push_back(res.value()["id"]);
        return stored.size() >= 3;
      },
      30s));
  Worker worker;
  register_worker(http, worker.url(), 8);
  const bool ran = wait_until([&] { return worker.stats()["received"] == stored.size(); }, 10s);
  std::string states;
  for (const std::string& id : stored) states += http.get("/v1/jobs/" + id).body + "\n";
  INFO("received " << worker.stats()["received"] << "; the jobs:\n"
                   << states << "the master's log:\n"
                   << master.log());
  CHECK(ran);
}

// A failing node holds up only its own shards' retries: the promoter (and the reaper) called the
// shards one after another, each of the down node's waiting out the client's retries (2.6 s), so
// a retry due on a live node waited for up to a whole pass (about 10 s with 4 of 16 shards down).
// Now one pass of all shards at once takes those 2.6 s, and a retry due meanwhile waits at most
// for it to end (8 s allow for a loaded machine).
TEST_CASE("on a cluster, retries on live nodes run on time while another node is down",
          "[cluster]") {
  RedisCluster cluster;
  Daemon master(with_a_node_down(cluster));
  auto http = master.http();
  Worker worker;
  register_worker(http, worker.url(), 16);
  // Each fails once; its retry is due 50 ms later (kYaml).
  const json job = {
      {"name", "n"}, {"argument", {{"fail_until", 1}}}, {"max_retry", 3}, {"keep_result", true}};
  for (int stored = 0; stored < 5;) {
    const auto res = http.post("/v1/jobs", job);
    if (res.status != 201) continue;  // a shard of the node down
    ++stored;
    const std::string id = res.value()["id"];
    INFO("job " << id);
    CHECK(
        wait_until([&] { return http.get("/v1/jobs/" + id).value()["state"] == "succeeded"; }, 8s));
  }
}

// A failing node stops only its own shards (README "Scaling out"), schedules included: the
// schedules of the other nodes load at a master's start and tick on time while the failing
// node's calls wait out their retries.
TEST_CASE("on a cluster, schedules on live nodes tick on time while another node is down",
          "[cluster]") {
  RedisCluster cluster;
  const std::uint16_t gone = cluster.masters().front();
  const std::vector<int> gone_slots = cluster.slots_of(gone);
  const auto on_gone = [&](const std::string& name) {
    const int shard = jq::store::hashed_shard(name, kShards);
    const int slot = redis::key_slot("{" + std::to_string(shard) + "}");
    return std::binary_search(gone_slots.begin(), gone_slots.end(), slot);
  };
  std::string live, failing;
  for (int i = 0; live.empty() || failing.empty(); ++i) {
    const std::string name = "every-second-" + std::to_string(i);
    (on_gone(name) ? failing : live) = name;
  }
  {
    Daemon master(on(cluster));
    auto http = master.http();
    for (const std::string& name : {live, failing}) {
      const json body = {
          {"name", name}, {"every", 1}, {"missed", "skip"}, {"job", {{"name", "n"}}}};
      REQUIRE(http.post("/v1/schedules", body).status == 201);
    }
  }
  cluster.kill(cluster.replica_of(gone));
  cluster.kill(gone);
  DaemonOptions started_during = on(cluster);
  started_during.wait_ready = false;  // not ready while a node is down: /readyz says so
  Daemon master(started_during);      // started while the node is down
  auto http = master.http();
  const auto read = [&] { return http.get("/v1/schedules/" + live).value(); };
  REQUIRE(wait_until([&] { return read()["runs"].get<long long>() > 0; }, 10s));
  const json before = read();
  // Four more ticks, none missed meanwhile (a tick more than 1 s late is missed).
  CHECK(wait_until(
      [&] { return read()["runs"].get<long long>() >= before["runs"].get<long long>() + 4; }, 8s));
  const json after = read();
  INFO("runs " << before["runs"] << " -> " << after["runs"] << ", missed " << before["missed_count"]
               << " -> " << after["missed_count"]);
  CHECK(after["missed_count"] == before["missed_count"]);
}

TEST_CASE("a jqmaster killed during a run on a cluster loses nothing", "[cluster]") {
  RedisCluster cluster;
  Daemon one(on(cluster)), two(on(cluster));
  TempDir dir;
  Worker worker({"--threads", "2", "--journal", dir.file("journal")});
  register_worker(one.http(), worker.url(), 64);
  Run run({one.port(), two.port()});
  run.start();
  REQUIRE(wait_until([&] { return run.acknowledged() >= kFaultAt; }, 60s, 10ms));
  run.drop_master(two.port());
  two.stop(SIGKILL, 5s);
  run.join();
  const Accounting a = account(one.http(), run, dir.file("journal"));
  CHECK(a.acknowledged == kJobs);
  CHECK(a.lost.empty());
  CHECK(a.pushed == a.succeeded + a.dead + a.ready + a.scheduled + a.running);
}

}  // namespace jq::test
