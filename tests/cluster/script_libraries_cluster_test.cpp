// ScriptLibraries on a Redis Cluster: every master holds its own copy of each library, so an old
// build's is deleted from each of them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "src/redis/keys.hpp"
#include "src/store/script_libraries.hpp"
#include "tests/cluster/cluster_support.hpp"
#include "tests/support/store_harness.hpp"

using jq::test::SyncRedis;

TEST_CASE("an old build's script library is deleted from every master of a cluster", "[cluster]") {
  auto& cluster = jq::test::shared_cluster();
  const std::string old = "jq_c1u5e0000001";
  for (std::uint16_t m : cluster.masters()) {
    REQUIRE(SyncRedis(m)
                .call({"FUNCTION", "LOAD", "REPLACE",
                       "#!lua name=" + old + "\nredis.register_function('" + old +
                           "_x', function() return 1 end)"})
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
