// The keys the scripts derive themselves (record_at in lua/lib/preamble.lua, ready_list in
// lua/lib/preamble_1_ready_list.lua), evaluated in Redis as the scripts evaluate them: their
// layout, and that they stay in the shard's hash slot.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::Keys;

TEST_CASE("jobs share a record bucket per 62 fields, by the field's first 8 characters",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  const Keys keys("jq");
  const RecordAt a = record_at(r, keys, 2, "00000001A");
  CHECK(a.bucket == "jq:{2}:jobs:00000001");
  CHECK(a.slot == "A");
  CHECK(record_at(r, keys, 2, "00000001z").bucket == a.bucket);
  CHECK(record_at(r, keys, 2, "000000020").bucket != a.bucket);
  CHECK(a.bucket.starts_with(keys.jobs_prefix(2)));
}

TEST_CASE("a priority's ready list cannot be another name's queue", "[redis]") {
  SyncRedis r(shared_redis().port());
  const Keys keys("jq");
  CHECK(ready_list(r, keys, 4, "email", -3) == "jq:{4}:ready:email#-3");
  CHECK(ready_list(r, keys, 4, "email", 0) == keys.ready(4, "email") + "#0");
  // Names may hold ':' but not '#': "a:1" has no priority list key equal to a queue key.
  CHECK(ready_list(r, keys, 4, "a", 1) != keys.ready(4, "a:1"));
  CHECK(ready_list(r, keys, 4, "a", 1) != ready_list(r, keys, 4, "a:1", 1));
}

TEST_CASE("derived keys keep the shard's hash tag", "[redis]") {
  SyncRedis r(shared_redis().port());
  const Keys keys("myapp");
  for (int shard : {0, 7, 1023}) {
    const std::string tag = "myapp:{" + std::to_string(shard) + "}:";
    CHECK(record_at(r, keys, shard, "00000000A").bucket.starts_with(tag));
    CHECK(ready_list(r, keys, shard, "email", 5).starts_with(tag));
  }
}
