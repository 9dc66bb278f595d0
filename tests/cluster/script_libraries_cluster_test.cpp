// The script library on a Redis Cluster, where every master holds its own copy: an old build's
// is deleted from each of them (ScriptLibraries), nodes that refused it for memory take it once
// they have room, and nodes that lose it while full take scripts by their source.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "src/redis/bindings/queue_stats.hpp"
#include "src/redis/keys.hpp"
#include "src/redis/script_sources.hpp"
#include "src/store/script_libraries.hpp"
#include "tests/cluster/cluster_support.hpp"
#include "tests/support/store_harness.hpp"

using jq::test::SyncRedis;

namespace {

// One queueStats call per shard, in one pipeline over the cluster's masters: whether each was
// answered (by FCALL or by the script's source), none refused.
bool every_shard_answers(jq::test::StoreHarness& h, const jq::redis::Keys& keys) {
  using jq::redis::bindings::QueueStats;
  std::vector<jq::redis::ScriptCall> calls;
  for (int shard = 0; shard < 16; ++shard) {
    calls.push_back(QueueStats::call(QueueStats::keys(keys, shard, "mail"), {"mail"}));
  }
  auto replies = h.run(h.client().eval_pipeline(calls));
  return replies && replies->elements.size() == 16 &&
         std::all_of(replies->elements.begin(), replies->elements.end(),
                     [](const jq::redis::Reply& r) { return !r.is_error(); });
}

}  // namespace

TEST_CASE("an old build's script library is deleted from every master of a cluster", "[cluster]") {
  auto& cluster = jq::test::shared_cluster();
  const std::string old = "jq_c1u5e0000001";
  for (std::uint16_t m : cluster.masters()) {
    REQUIRE(SyncRedis(m)
                .call({"FUNCTION", "LOAD", "REPLACE", jq::test::minimal_library_source(old)})
                .str == old);
  }
  const jq::redis::Keys keys("cl");
  jq::test::StoreHarness h(cluster.url());
  // Each master's connection comes up on its own after the map is known.
  const std::vector<std::vector<std::string>> ping{{"PING"}};
  REQUIRE(jq::test::wait_until(
      [&] {
        auto nodes = h.run(h.client().on_every_master(ping));
        return std::all_of(nodes.begin(), nodes.end(),
                           [](const auto& node) { return node.replies.has_value(); });
      },
      std::chrono::seconds(5), std::chrono::milliseconds(20)));
  // The record lives on the node of its slot; written through the cluster client.
  REQUIRE(h.run(h.client().command({"ZADD", keys.libraries(), "1", old})));
  jq::store::ScriptLibraries libraries(h.client(), keys);
  CHECK(h.run(libraries.sweep(1000)) == 1);
  for (std::uint16_t m : cluster.masters()) {
    CHECK(SyncRedis(m).call({"FUNCTION", "LIST", "LIBRARYNAME", old}).elements.empty());
  }
  CHECK(h.run(h.client().command({"ZSCORE", keys.libraries(), old}))->is_nil());
}

TEST_CASE("cluster nodes that refused the script library for memory take it once they have room",
          "[cluster]") {
  auto& cluster = jq::test::shared_cluster();
  const std::string library(jq::redis::library_name());
  for (std::uint16_t m : cluster.masters()) {
    SyncRedis node(m);
    REQUIRE(node.call({"FUNCTION", "FLUSH"}).str == "OK");
    REQUIRE(node.call({"CONFIG", "SET", "maxmemory", "1"}).str == "OK");
  }
  // Every node's connection comes up without the library: scripts go by their source.
  jq::test::StoreHarness h(cluster.url());
  const jq::redis::Keys keys("cm");
  auto all_answer = [&] { return every_shard_answers(h, keys); };
  REQUIRE(jq::test::wait_until(all_answer, std::chrono::seconds(5), std::chrono::milliseconds(20)));
  for (std::uint16_t m : cluster.masters()) {
    CHECK(SyncRedis(m).call({"FUNCTION", "LIST", "LIBRARYNAME", library}).elements.empty());
    REQUIRE(SyncRedis(m).call({"CONFIG", "SET", "maxmemory", "0"}).str == "OK");
  }
  // Calls go on; within seconds each node's connection loads the library again by itself.
  auto loaded_everywhere = [&] {
    all_answer();
    return std::all_of(cluster.masters().begin(), cluster.masters().end(), [&](std::uint16_t m) {
      return !SyncRedis(m).call({"FUNCTION", "LIST", "LIBRARYNAME", library}).elements.empty();
    });
  };
  CHECK(jq::test::wait_until(loaded_everywhere, std::chrono::seconds(10),
                             std::chrono::milliseconds(100)));
}

TEST_CASE("cluster nodes that lose the script library while full take scripts by their source",
          "[cluster]") {
  auto& cluster = jq::test::shared_cluster();
  const std::string library(jq::redis::library_name());
  jq::test::StoreHarness h(cluster.url());
  const jq::redis::Keys keys("cf");
  auto answers = [&] { return every_shard_answers(h, keys); };
  REQUIRE(jq::test::wait_until(answers, std::chrono::seconds(5), std::chrono::milliseconds(20)));
  // The library goes (a sweep by another build, FUNCTION FLUSH) while every node is full: loading
  // it again is refused, and the very next calls are answered all the same.
  for (std::uint16_t m : cluster.masters()) {
    SyncRedis node(m);
    REQUIRE(node.call({"FUNCTION", "FLUSH"}).str == "OK");
    REQUIRE(node.call({"CONFIG", "SET", "maxmemory", "1"}).str == "OK");
  }
  const bool answered_full = answers();
  bool loaded_anywhere = false;
  for (std::uint16_t m : cluster.masters()) {
    SyncRedis node(m);
    loaded_anywhere |= !node.call({"FUNCTION", "LIST", "LIBRARYNAME", library}).elements.empty();
    REQUIRE(node.call({"CONFIG", "SET", "maxmemory", "0"}).str == "OK");
  }
  CHECK(answered_full);
  CHECK_FALSE(loaded_anywhere);
}

// A new build's first connection asks its seed for the library and loads it when missing; a
// replica refuses that (READONLY), and a seed list of replicas only (one seed that a failover
// made a replica) left the client unconnected for good, the slot map never read.
TEST_CASE("a new build reached through a replica seed loads its library on the masters",
          "[cluster]") {
  auto& cluster = jq::test::shared_cluster();
  const std::string library(jq::redis::library_name());
  const std::vector<std::uint16_t> masters = cluster.masters();
  for (std::uint16_t m : masters) REQUIRE(SyncRedis(m).call({"FUNCTION", "FLUSH"}).str == "OK");
  const std::uint16_t replica = cluster.replica_of(masters.front());
  REQUIRE(jq::test::wait_until(
      [&] {
        return SyncRedis(replica).call({"FUNCTION", "LIST"}).elements.empty();
      },
      std::chrono::seconds(5)));
  jq::test::StoreHarness h("redis+cluster://127.0.0.1:" + std::to_string(replica));
  const jq::redis::Keys keys("cr");
  CHECK(jq::test::wait_until([&] { return every_shard_answers(h, keys); }, std::chrono::seconds(5),
                             std::chrono::milliseconds(20)));
  for (std::uint16_t m : masters) {
    CHECK(SyncRedis(m).call({"FUNCTION", "LIST", "LIBRARYNAME", library}).elements.size() == 1);
  }
}
