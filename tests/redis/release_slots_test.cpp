// releaseSlots-1.lua: a master gives slots back, never below zero.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::bindings::ReleaseSlots;

namespace {

std::int64_t release(SyncRedis& r, const jq::redis::Keys& keys, const std::string& master, int n) {
  auto reply = r.eval(ReleaseSlots::call(ReleaseSlots::keys(keys, "w1"), {master, n}));
  REQUIRE(reply.is_integer());
  return reply.integer;
}

}  // namespace

TEST_CASE("releasing slots returns what the master still holds", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  r.call({"HSET", keys.worker_slots("w1"), "m1", "5", "m2", "3"});

  CHECK(release(r, keys, "m1", 2) == 3);
  CHECK(hgetall(r, keys.worker_slots("w1")) ==
        std::map<std::string, std::string>{{"m1", "3"}, {"m2", "3"}});
}

TEST_CASE("a holding released to zero is deleted", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  r.call({"HSET", keys.worker_slots("w1"), "m1", "2", "m2", "3"});

  CHECK(release(r, keys, "m1", 2) == 0);
  CHECK(hgetall(r, keys.worker_slots("w1")) == std::map<std::string, std::string>{{"m2", "3"}});
}

TEST_CASE("releasing more than is held, or what a dropped master held, stops at zero", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  r.call({"HSET", keys.worker_slots("w1"), "m1", "1"});

  CHECK(release(r, keys, "m1", 4) == 0);
  CHECK(release(r, keys, "m2", 1) == 0);
  CHECK_FALSE(exists(r, keys.worker_slots("w1")));
}
