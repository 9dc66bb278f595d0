// A batch whose keyed jobs go to several shards (ordering and unique keys route jobs to their
// key's shard): stored whole. On one Redis the shards' scripts run in one MULTI/EXEC; against a
// Redis Cluster node reached by redis:// (ctest: keyed_batch_one_node_cluster) no transaction
// spans two shards' slots, and they run one after another.
#include <catch2/catch.hpp>

#include "tests/support/daemon.hpp"
#include "tests/support/job_calls.hpp"
#include "tests/support/redis_server.hpp"

using jq::test::Daemon;
using jq::test::RedisServer;
using nlohmann::json;

TEST_CASE("a batch of keyed jobs for several shards is stored whole, and its duplicates found",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});  // 4 shards
  auto http = daemon.http();
  const auto keys = jq::test::keys_in_different_shards(3, 4);
  const json batch = json::array({{{"name", "keyed"}, {"unique_key", keys[0]}},
                                  {{"name", "keyed"}, {"ordering_key", keys[1]}},
                                  {{"name", "keyed"}, {"unique_key", keys[2]}},
                                  {{"name", "keyed"}}});
  auto pushed = http.post("/v1/jobs", batch);
  REQUIRE(pushed.status == 201);
  const json ids = pushed.value()["ids"];
  REQUIRE(ids.size() == 4);
  CHECK(http.get("/v1/stats").value()["pushed"] == 4);
  auto again = http.post("/v1/jobs", json::array({batch[0], batch[2]}));
  REQUIRE(again.status == 200);  // both duplicates
  CHECK(again.value()["duplicates"] == json::array({0, 1}));
  CHECK(again.value()["ids"] == json::array({ids[0], ids[2]}));
}

TEST_CASE("without MULTI a batch of keyed jobs for several shards is stored shard by shard",
          "[http]") {
  // A Redis user that may not run MULTI (an ACL): each shard's script runs on its own, the
  // batch is stored and answered, and the log says what to grant.
  RedisServer redis;
  REQUIRE(jq::test::SyncRedis(redis.port())
              .call({"ACL", "SETUSER", "jq", "on", ">secret", "~*", "&*", "+@all", "-multi"})
              .str == "OK");
  Daemon daemon(
      {.redis_url = "redis://jq:secret@127.0.0.1:" + std::to_string(redis.port()) + "/0"});
  auto http = daemon.http();
  const auto keys = jq::test::keys_in_different_shards(2, 4);
  auto pushed = http.post("/v1/jobs", json::array({{{"name", "keyed"}, {"unique_key", keys[0]}},
                                                   {{"name", "keyed"}, {"unique_key", keys[1]}}}));
  REQUIRE(pushed.status == 201);
  CHECK(http.get("/v1/stats").value()["pushed"] == 2);
  if (!jq::test::redis_cluster_mode()) {  // a cluster node takes no transaction across shards
    CHECK(daemon.log().find("grant jqmaster's Redis user MULTI and EXEC") != std::string::npos);
  }
}
