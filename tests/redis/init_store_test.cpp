// initStore-1.lua: the shard count and the data layout are fixed when the store is created.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::ScriptId;

TEST_CASE("initStore on an empty store records the shard count and returns it", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto reply = r.eval(ScriptId::init_store, {keys.meta()}, {"16", "1700000000123", "2"});

  CHECK(integers(reply) == std::vector<std::int64_t>{16, 2});
  CHECK(hget(r, keys.meta(), "shards") == "16");
  CHECK(hget(r, keys.meta(), "created_at_ms") == "1700000000123");
  CHECK(hget(r, keys.meta(), "version") == "2");
}

TEST_CASE("initStore on an existing store returns the stored shard count, not the caller's",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  REQUIRE(r.eval(ScriptId::init_store, {keys.meta()}, {"16", "1700000000123", "2"}).is_array());

  auto other = r.eval(ScriptId::init_store, {keys.meta()}, {"8", "1800000000000", "2"});
  CHECK(integers(other) == std::vector<std::int64_t>{16, 2});
  auto same = r.eval(ScriptId::init_store, {keys.meta()}, {"16", "1900000000000", "2"});
  CHECK(integers(same) == std::vector<std::int64_t>{16, 2});

  CHECK(hget(r, keys.meta(), "shards") == "16");
  CHECK(hget(r, keys.meta(), "created_at_ms") == "1700000000123");
  CHECK(hget(r, keys.meta(), "version") == "2");
}

TEST_CASE("stores under different prefixes keep their own shard counts", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto one = fresh_keys();
  auto two = fresh_keys();
  CHECK(integers(r.eval(ScriptId::init_store, {one.meta()}, {"4", "1", "2"})).front() == 4);
  CHECK(integers(r.eval(ScriptId::init_store, {two.meta()}, {"32", "2", "2"})).front() == 32);
  CHECK(integers(r.eval(ScriptId::init_store, {one.meta()}, {"32", "3", "2"})).front() == 4);
}

TEST_CASE("initStore reports the layout a store was created with, not the caller's", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  r.call({"HSET", keys.meta(), "shards", "16", "version", "1"});  // written by an older release
  CHECK(integers(r.eval(ScriptId::init_store, {keys.meta()}, {"16", "1", "2"})) ==
        std::vector<std::int64_t>{16, 1});
  CHECK(hget(r, keys.meta(), "version") == "1");
}
