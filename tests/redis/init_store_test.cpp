// initStore-1.lua: the shard count is fixed when the store is created.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::ScriptId;

TEST_CASE("initStore on an empty store records the shard count and returns it", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto reply = r.eval(ScriptId::init_store, {keys.meta()}, {"16", "1700000000123"});

  REQUIRE(reply.is_integer());
  CHECK(reply.integer == 16);
  CHECK(hget(r, keys.meta(), "shards") == "16");
  CHECK(hget(r, keys.meta(), "created_at_ms") == "1700000000123");
  CHECK(hget(r, keys.meta(), "version") == "1");
}

TEST_CASE("initStore on an existing store returns the stored shard count, not the caller's",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  REQUIRE(r.eval(ScriptId::init_store, {keys.meta()}, {"16", "1700000000123"}).integer == 16);

  auto other = r.eval(ScriptId::init_store, {keys.meta()}, {"8", "1800000000000"});
  REQUIRE(other.is_integer());
  CHECK(other.integer == 16);
  auto same = r.eval(ScriptId::init_store, {keys.meta()}, {"16", "1900000000000"});
  CHECK(same.integer == 16);

  CHECK(hget(r, keys.meta(), "shards") == "16");
  CHECK(hget(r, keys.meta(), "created_at_ms") == "1700000000123");
  CHECK(hget(r, keys.meta(), "version") == "1");
}

TEST_CASE("stores under different prefixes keep their own shard counts", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto one = fresh_keys();
  auto two = fresh_keys();
  CHECK(r.eval(ScriptId::init_store, {one.meta()}, {"4", "1"}).integer == 4);
  CHECK(r.eval(ScriptId::init_store, {two.meta()}, {"32", "2"}).integer == 32);
  CHECK(r.eval(ScriptId::init_store, {one.meta()}, {"32", "3"}).integer == 4);
}
