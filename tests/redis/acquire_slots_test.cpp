// acquireSlots-2.lua: a worker's concurrency is shared by all masters; lapsed masters' slots
// come back.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::bindings::AcquireSlots;

namespace {

std::int64_t acquire(SyncRedis& r, const jq::redis::Keys& keys, const std::string& master, int want,
                     int concurrency = 8, std::int64_t now_ms = kNowMs) {
  auto reply = r.eval(
      AcquireSlots::call(AcquireSlots::keys(keys, "w1"), {master, want, concurrency, now_ms, {}}));
  REQUIRE(reply.is_integer());
  return reply.integer;
}

void heartbeat(SyncRedis& r, const jq::redis::Keys& keys, const std::string& master,
               std::int64_t expiry_ms) {
  r.call({"ZADD", keys.masters(), std::to_string(expiry_ms), master});
}

}  // namespace

TEST_CASE("one master is granted what it wants up to the worker's concurrency", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  heartbeat(r, keys, "m1", kNowMs + 10000);

  CHECK(acquire(r, keys, "m1", 3) == 3);
  CHECK(acquire(r, keys, "m1", 10) == 5);
  CHECK(acquire(r, keys, "m1", 1) == 0);
  CHECK(hgetall(r, keys.worker_slots("w1")) == std::map<std::string, std::string>{{"m1", "8"}});
}

TEST_CASE("asking for nothing grants nothing and writes nothing", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  heartbeat(r, keys, "m1", kNowMs + 10000);
  CHECK(acquire(r, keys, "m1", 0) == 0);
  CHECK_FALSE(exists(r, keys.worker_slots("w1")));
}

TEST_CASE("two live masters share the concurrency", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  heartbeat(r, keys, "m1", kNowMs + 10000);
  heartbeat(r, keys, "m2", kNowMs + 10000);

  CHECK(acquire(r, keys, "m1", 5) == 5);
  CHECK(acquire(r, keys, "m2", 5) == 3);
  CHECK(acquire(r, keys, "m1", 1) == 0);
  CHECK(hgetall(r, keys.worker_slots("w1")) ==
        std::map<std::string, std::string>{{"m1", "5"}, {"m2", "3"}});
}

TEST_CASE("slots held by a master whose heartbeat lapsed come back", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  heartbeat(r, keys, "m1", kNowMs + 10000);
  heartbeat(r, keys, "m2", kNowMs + 10000);
  REQUIRE(acquire(r, keys, "m1", 3) == 3);
  REQUIRE(acquire(r, keys, "m2", 5) == 5);

  heartbeat(r, keys, "m2", kNowMs - 1);  // m2 stopped renewing
  CHECK(acquire(r, keys, "m1", 10) == 5);
  CHECK(hgetall(r, keys.worker_slots("w1")) == std::map<std::string, std::string>{{"m1", "8"}});
}

TEST_CASE("a heartbeat expiring exactly now still holds its slots", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  heartbeat(r, keys, "m1", kNowMs + 10000);
  heartbeat(r, keys, "m2", kNowMs);
  r.call({"HSET", keys.worker_slots("w1"), "m2", "6"});

  CHECK(acquire(r, keys, "m1", 10) == 2);
}

TEST_CASE("slots held by a master with no heartbeat at all come back", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  heartbeat(r, keys, "m1", kNowMs + 10000);
  r.call({"HSET", keys.worker_slots("w1"), "ghost", "8"});

  CHECK(acquire(r, keys, "m1", 4) == 4);
  CHECK(hgetall(r, keys.worker_slots("w1")) == std::map<std::string, std::string>{{"m1", "4"}});
}

TEST_CASE("the caller's own holding is kept even when its heartbeat lapsed", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  r.call({"HSET", keys.worker_slots("w1"), "m1", "6"});  // m1 never sent a heartbeat

  CHECK(acquire(r, keys, "m1", 5) == 2);
  CHECK(hgetall(r, keys.worker_slots("w1")) == std::map<std::string, std::string>{{"m1", "8"}});
}

TEST_CASE("a concurrency lowered below what is held grants nothing and takes nothing back",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  heartbeat(r, keys, "m1", kNowMs + 10000);
  REQUIRE(acquire(r, keys, "m1", 8) == 8);

  CHECK(acquire(r, keys, "m1", 3, 2) == 0);
  CHECK(hget(r, keys.worker_slots("w1"), "m1") == "8");
}

TEST_CASE("acquireSlots renews the caller's heartbeat when given a ttl", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string slots = keys.worker_slots("w1");
  auto grant =
      r.eval(AcquireSlots::call({slots, keys.masters()}, {"fresh-master", 2, 2, 1000, 5000}));
  CHECK(grant.integer == 2);
  CHECK(r.call({"ZSCORE", keys.masters(), "fresh-master"}).str == "6000");
  // Another master now sees a live holder and gets nothing.
  auto other = r.eval(AcquireSlots::call({slots, keys.masters()}, {"other", 2, 2, 1001, 5000}));
  CHECK(other.integer == 0);
}
