// beatMaster-1.lua: a master's heartbeat keeps its slot holdings its own, also while Redis is
// over maxmemory.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::bindings::AcquireSlots;
using jq::redis::bindings::BeatMaster;

namespace {

void beat(SyncRedis& r, const jq::redis::Keys& keys, const std::string& master,
          std::int64_t expiry_ms) {
  auto reply = r.eval(BeatMaster::call(BeatMaster::keys(keys), {master, expiry_ms}));
  REQUIRE(BeatMaster::decode(reply));
}

}  // namespace

TEST_CASE("a beating master keeps its slots while one whose heartbeat lapsed loses them",
          "[redis]") {
  RedisServer redis;  // its own: it ends over maxmemory
  SyncRedis r(redis.port());
  const jq::redis::Keys keys("b");
  r.call({"HSET", keys.worker_slots("w1"), "alive", "2", "gone", "3"});
  beat(r, keys, "alive", kNowMs - 1000);
  beat(r, keys, "gone", kNowMs - 1000);
  REQUIRE(r.call({"CONFIG", "SET", "maxmemory", "1"}).str == "OK");

  beat(r, keys, "alive", kNowMs + 5000);  // renewed, over maxmemory
  CHECK(zscore(r, keys.masters(), "alive") == kNowMs + 5000);
  auto granted =
      r.eval(AcquireSlots::call(AcquireSlots::keys(keys, "w1"), {"other", 8, 8, kNowMs, {}}));
  REQUIRE(granted.is_integer());
  CHECK(granted.integer == 6);  // 8 less the 2 "alive" holds; "gone"'s 3 came back
  CHECK(hgetall(r, keys.worker_slots("w1")) ==
        std::map<std::string, std::string>{{"alive", "2"}, {"other", "6"}});
}
