// initStore-1.lua: the shard count and the data layout are fixed when the store is created.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::bindings::InitStore;

namespace {

jq::redis::Reply init_store(SyncRedis& r, const jq::redis::Keys& keys, std::int64_t shards,
                            std::int64_t now_ms, std::int64_t layout_version) {
  jq::redis::Reply reply =
      r.eval(InitStore::call(InitStore::keys(keys), {shards, now_ms, layout_version}));
  REQUIRE(InitStore::decode(reply));
  return reply;
}

}  // namespace

TEST_CASE("initStore on an empty store records the shard count and returns it", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto reply = init_store(r, keys, 16, 1700000000123, 2);

  CHECK(integers(reply) == std::vector<std::int64_t>{16, 2});
  CHECK(hget(r, keys.meta(), "shards") == "16");
  CHECK(hget(r, keys.meta(), "created_at_ms") == "1700000000123");
  CHECK(hget(r, keys.meta(), "version") == "2");
}

TEST_CASE("initStore on an existing store returns the stored shard count, not the caller's",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  REQUIRE(init_store(r, keys, 16, 1700000000123, 2).is_array());

  auto other = init_store(r, keys, 8, 1800000000000, 2);
  CHECK(integers(other) == std::vector<std::int64_t>{16, 2});
  auto same = init_store(r, keys, 16, 1900000000000, 2);
  CHECK(integers(same) == std::vector<std::int64_t>{16, 2});

  CHECK(hget(r, keys.meta(), "shards") == "16");
  CHECK(hget(r, keys.meta(), "created_at_ms") == "1700000000123");
  CHECK(hget(r, keys.meta(), "version") == "2");
}

TEST_CASE("stores under different prefixes keep their own shard counts", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto one = fresh_keys();
  auto two = fresh_keys();
  CHECK(integers(init_store(r, one, 4, 1, 2)).front() == 4);
  CHECK(integers(init_store(r, two, 32, 2, 2)).front() == 32);
  CHECK(integers(init_store(r, one, 32, 3, 2)).front() == 4);
}

TEST_CASE("initStore reports the layout a store was created with, not the caller's", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  r.call({"HSET", keys.meta(), "shards", "16", "version", "1"});  // written by an older release
  CHECK(integers(init_store(r, keys, 16, 1, 2)) == std::vector<std::int64_t>{16, 1});
  CHECK(hget(r, keys.meta(), "version") == "1");
}
