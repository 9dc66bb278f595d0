// redis::Client in cluster mode against a real 6-node Redis Cluster: routing by slot, pipelines
// split per node and put back in order, MOVED, ASK, a node that lost the script library, and a
// script whose keys cross slots refused before it is sent.
#include <algorithm>

#include <catch2/catch.hpp>

#include "src/redis/bindings/queue_stats.hpp"
#include "src/redis/client.hpp"
#include "src/redis/errc.hpp"
#include "src/redis/keys.hpp"
#include "src/redis/slot.hpp"
#include "tests/cluster/cluster_support.hpp"
#include "tests/support/store_harness.hpp"

namespace {

using namespace std::chrono_literals;
using jq::redis::Reply;
using jq::redis::ReplyResult;
using jq::test::StoreHarness;
using jq::test::SyncRedis;
using Commands = std::vector<std::vector<std::string>>;

// Three keys whose slots are served by three different masters.
std::vector<std::string> keys_on_every_master(jq::test::RedisCluster& cluster) {
  std::vector<std::string> keys;
  std::vector<std::uint16_t> seen;
  for (int tag = 0; keys.size() < 3 && tag < 1000; ++tag) {
    const std::string key = "k:{" + std::to_string(tag) + "}";
    const auto master = cluster.master_of(jq::redis::key_slot(key));
    if (std::find(seen.begin(), seen.end(), master) != seen.end()) continue;
    seen.push_back(master);
    keys.push_back(key);
  }
  return keys;
}

// How many EVAL (by source) a node ran since it started (INFO commandstats).
long library_loads(std::uint16_t port) {
  const std::string info = SyncRedis(port).call({"INFO", "commandstats"}).str;
  const std::string tag = "cmdstat_function|load:calls=";
  const auto at = info.find(tag);
  return at == std::string::npos ? 0 : std::stol(info.substr(at + tag.size()));
}

}  // namespace

TEST_CASE(
    "a cluster client sends each command to its slot's master and answers a pipeline in order",
    "[cluster]") {
  auto& cluster = jq::test::shared_cluster();
  StoreHarness h(cluster.url());
  const auto keys = keys_on_every_master(cluster);
  REQUIRE(keys.size() == 3);
  Commands sets;
  for (const auto& k : keys) sets.push_back({"SET", k, "value of " + k});
  auto set = h.run(h.client().pipeline(sets));
  REQUIRE(set);
  Commands gets;
  for (auto it = keys.rbegin(); it != keys.rend(); ++it) gets.push_back({"GET", *it});
  gets.push_back({"PING"});
  auto got = h.run(h.client().pipeline(gets));
  REQUIRE(got);
  REQUIRE(got->elements.size() == 4);
  for (std::size_t i = 0; i < 3; ++i) CHECK(got->elements[i].str == "value of " + keys[2 - i]);
  CHECK(got->elements[3].str == "PONG");
  // Each key is on the master that serves its slot, and only there.
  for (const auto& k : keys) {
    SyncRedis owner(cluster.master_of(jq::redis::key_slot(k)));
    CHECK(owner.call({"GET", k}).str == "value of " + k);
  }
}

TEST_CASE("a cluster client runs scripts on their shard's node, each node's script cache apart",
          "[cluster]") {
  auto& cluster = jq::test::shared_cluster();
  StoreHarness h(cluster.url());
  const jq::redis::Keys keys = jq::redis::Keys("cc");
  using jq::redis::bindings::QueueStats;
  // A node that lost its scripts (restarted without persistence) answers that the function is
  // not found: the library is loaded there, and the call sent again.
  long loads_before = 0;
  for (std::uint16_t m : cluster.masters()) {
    REQUIRE(SyncRedis(m).call({"FUNCTION", "FLUSH"}).str == "OK");
    loads_before += library_loads(m);
  }
  std::vector<jq::redis::ScriptCall> calls;
  for (int shard = 0; shard < 16; ++shard) {
    calls.push_back(QueueStats::call(QueueStats::keys(keys, shard, "mail"), {"mail"}));
  }
  auto replies = h.run(h.client().eval_pipeline(calls));
  REQUIRE(replies);
  REQUIRE(replies->elements.size() == 16);
  for (const Reply& r : replies->elements) CHECK(QueueStats::decode(r));
  // They answered because the library was loaded again where it was gone, on every master.
  long loads_after = 0;
  for (std::uint16_t m : cluster.masters()) loads_after += library_loads(m);
  CHECK(loads_after >= loads_before + static_cast<long>(cluster.masters().size()));
}

TEST_CASE("a cluster client refuses a script whose keys are in different slots before sending it",
          "[cluster]") {
  auto& cluster = jq::test::shared_cluster();
  StoreHarness h(cluster.url());
  using jq::redis::bindings::QueueStats;
  auto call = QueueStats::call(QueueStats::keys(jq::redis::Keys("cc"), 1, "mail"), {"mail"});
  call.keys.back() = "cc:{2}:other";
  auto reply = h.run(h.client().eval(call));
  REQUIRE_FALSE(reply);
  CHECK(reply.error() == jq::redis::Errc::cross_slot);
}

TEST_CASE("a cluster client follows ASK during a slot's migration and MOVED after it",
          "[cluster]") {
  auto& cluster = jq::test::shared_cluster();
  StoreHarness h(cluster.url());
  const std::string key = "ask:{moving}";
  const int slot = jq::redis::key_slot(key);
  const std::uint16_t from = cluster.master_of(slot);
  std::uint16_t to = 0;
  for (std::uint16_t m : cluster.masters()) {
    if (m != from) to = m;
  }
  std::vector<std::string> set{"SET", key, "here"};
  REQUIRE(h.run(h.client().command(set)));
  // Migrate the slot by hand, key by key, as redis-cli --cluster reshard does.
  SyncRedis source(from), target(to);
  const std::string from_id = cluster.node_id(from), to_id = cluster.node_id(to);
  REQUIRE(target.call({"CLUSTER", "SETSLOT", std::to_string(slot), "IMPORTING", from_id}).str ==
          "OK");
  REQUIRE(source.call({"CLUSTER", "SETSLOT", std::to_string(slot), "MIGRATING", to_id}).str ==
          "OK");
  REQUIRE(source.call({"MIGRATE", "127.0.0.1", std::to_string(to), key, "0", "5000"}).str == "OK");
  std::vector<std::string> get{"GET", key};
  auto during = h.run(h.client().command(get));  // source: -ASK; target after ASKING: the value
  REQUIRE(during);
  CHECK(during->str == "here");
  for (SyncRedis* node : {&target, &source}) {
    REQUIRE(node->call({"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", to_id}).str == "OK");
  }
  std::vector<std::string> again{"GET", key};
  auto after = h.run(h.client().command(again));  // the client's map still says `from`: -MOVED
  REQUIRE(after);
  CHECK(after->str == "here");
  // The move back, so other tests find the layout redis-cli made (the slot's owner is known
  // to every node once the epoch spreads; the client learns it from MOVED again).
  REQUIRE(source.call({"CLUSTER", "SETSLOT", std::to_string(slot), "IMPORTING", to_id}).str ==
          "OK");
  REQUIRE(target.call({"CLUSTER", "SETSLOT", std::to_string(slot), "MIGRATING", from_id}).str ==
          "OK");
  REQUIRE(target.call({"MIGRATE", "127.0.0.1", std::to_string(from), key, "0", "5000"}).str ==
          "OK");
  for (SyncRedis* node : {&source, &target}) {
    REQUIRE(node->call({"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", from_id}).str == "OK");
  }
}

TEST_CASE("a cluster client asks every master when a question concerns all of them", "[cluster]") {
  auto& cluster = jq::test::shared_cluster();
  StoreHarness h(cluster.url());
  Commands ping{{"PING"}};
  std::vector<jq::redis::Client::NodeReplies> replies;
  // Each master's connection comes up on its own after the map is known.
  const bool all = jq::test::wait_until(
      [&] {
        replies = h.run(h.client().on_every_master(ping));
        return std::all_of(replies.begin(), replies.end(),
                           [](const auto& node) { return node.replies.has_value(); });
      },
      5s, 20ms);
  REQUIRE(all);
  CHECK(replies.size() == 3);
  for (const auto& node : replies) CHECK(node.replies->elements[0].str == "PONG");
}
