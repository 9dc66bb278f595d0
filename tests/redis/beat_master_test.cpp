// beatMaster-2.lua: a master's heartbeat keeps its slot holdings its own, also while Redis is
// over maxmemory, and keeps its script library's record as late as its latest beat.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::bindings::AcquireSlots;
using jq::redis::bindings::BeatMaster;

namespace {

void beat(SyncRedis& r, const jq::redis::Keys& keys, const std::string& master,
          std::int64_t expiry_ms) {
  auto reply =
      r.eval(BeatMaster::call(BeatMaster::keys(keys), {master, expiry_ms, "jq_" + master}));
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

TEST_CASE("a library's record keeps the latest heartbeat of the masters that use it", "[redis]") {
  SyncRedis r(shared_redis().port());
  const jq::redis::Keys keys = fresh_keys();
  using jq::redis::bindings::BeatMaster;
  auto beat = [&](const std::string& master, std::int64_t expiry_ms) {
    REQUIRE(BeatMaster::decode(
        r.eval(BeatMaster::call(BeatMaster::keys(keys), {master, expiry_ms, "jq_shared"}))));
  };
  beat("m1", kNowMs + 5000);
  beat("m2", kNowMs + 3000);  // a master whose beat is older does not move it back
  CHECK(zscore(r, keys.libraries(), "jq_shared") == kNowMs + 5000);
  beat("m2", kNowMs + 8000);
  CHECK(zscore(r, keys.libraries(), "jq_shared") == kNowMs + 8000);
  CHECK(zscore(r, keys.masters(), "m1") == kNowMs + 5000);
}

// The master tells a stall from the expiry its beat replaces: one already past means its
// heartbeat lapsed and other masters may have dropped its slot holdings. And it sets its clock
// by the Redis clock the beat answers.
TEST_CASE("a beat answers the expiry it replaces (0 for a master's first) and Redis's clock",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  const jq::redis::Keys keys = fresh_keys();
  const auto beat_answer = [&](std::int64_t expiry_ms) {
    const auto beat = BeatMaster::decode(
        r.eval(BeatMaster::call(BeatMaster::keys(keys), {"m", expiry_ms, "jq_m"})));
    REQUIRE(beat);
    return *beat;
  };
  const auto time = r.call({"TIME"});
  REQUIRE(time.elements.size() == 2);
  const std::int64_t before_us =
      std::stoll(time.elements[0].str) * 1'000'000 + std::stoll(time.elements[1].str);
  const auto first = beat_answer(kNowMs + 5000);
  CHECK(first.before_ms == 0);
  CHECK(first.redis_us >= before_us);
  CHECK(first.redis_us < before_us + 5'000'000);
  const auto second = beat_answer(kNowMs + 5500);
  CHECK(second.before_ms == kNowMs + 5000);
  CHECK(second.redis_us >= first.redis_us);
}
