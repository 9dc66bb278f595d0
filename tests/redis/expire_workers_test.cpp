// expireWorkers-4.lua: registrations with a ttl that was not renewed in time are removed, with
// their slot holdings and stats.
#include <catch2/catch.hpp>

#include <algorithm>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
using jq::redis::bindings::ExpireWorkers;

namespace {

std::vector<std::string> expire_workers(SyncRedis& r, const jq::redis::Keys& keys,
                                        std::int64_t now_ms) {
  Reply reply =
      r.eval(ExpireWorkers::call(ExpireWorkers::keys(keys), {now_ms, keys.control_channel()}));
  auto removed = ExpireWorkers::decode(reply);
  REQUIRE(removed);
  std::vector<std::string> ids = *removed;
  std::sort(ids.begin(), ids.end());
  return ids;
}

void put_worker(SyncRedis& r, const jq::redis::Keys& keys, const std::string& id,
                std::int64_t expires_at_ms) {
  const std::string url = "http://" + id + "/";
  r.call({"HSET", keys.workers(), id,
          R"({"url":")" + url + R"(","names":["email"],"concurrency":8,"headers":{},"ttl_ms":)" +
              std::string(expires_at_ms > 0 ? "5000" : "0") +
              R"(,"registered_at_ms":1700000000000,"expires_at_ms":)" +
              std::to_string(expires_at_ms) + "}"});
  r.call({"HSET", keys.worker_urls(), url, id});
  r.call({"HSET", keys.worker_slots(id), "master-1", "2"});
  r.call({"HSET", keys.worker_stats(id), "dispatched", "5"});
}

}  // namespace

TEST_CASE("expireWorkers removes registrations that expired before now and announces it",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  put_worker(r, keys, "w1", 0);              // no ttl
  put_worker(r, keys, "w2", kNowMs - 1);     // lapsed
  put_worker(r, keys, "w3", kNowMs);         // lapses now, not before
  put_worker(r, keys, "w4", kNowMs + 5000);  // renewed in time
  put_worker(r, keys, "w5", 1);              // lapsed long ago

  CHECK(expire_workers(r, keys, kNowMs) == std::vector<std::string>{"w2", "w5"});
  CHECK(r.call({"HLEN", keys.workers()}).integer == 3);
  CHECK_FALSE(hget(r, keys.workers(), "w2"));
  CHECK(hgetall(r, keys.worker_urls()) == std::map<std::string, std::string>{{"http://w1/", "w1"},
                                                                             {"http://w3/", "w3"},
                                                                             {"http://w4/", "w4"}});
  for (const std::string id : {"w2", "w5"}) {
    CHECK_FALSE(exists(r, keys.worker_slots(id)));
    CHECK_FALSE(exists(r, keys.worker_stats(id)));
  }
  for (const std::string id : {"w1", "w3", "w4"}) {
    CHECK(hgetall(r, keys.worker_slots(id)) ==
          std::map<std::string, std::string>{{"master-1", "2"}});
    CHECK(hgetall(r, keys.worker_stats(id)) ==
          std::map<std::string, std::string>{{"dispatched", "5"}});
  }
  CHECK(events.take(r) == std::vector<std::string>{"w"});
}

TEST_CASE("expireWorkers with nothing expired removes nothing and announces nothing", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  put_worker(r, keys, "w1", 0);
  put_worker(r, keys, "w2", kNowMs + 1);
  const std::string before = dump(r, keys.workers());
  const std::string slots_before = dump(r, keys.worker_slots("w2"));

  CHECK(expire_workers(r, keys, kNowMs).empty());
  CHECK(expire_workers(r, fresh_keys(), kNowMs).empty());  // no workers at all
  CHECK(dump(r, keys.workers()) == before);
  CHECK(dump(r, keys.worker_slots("w2")) == slots_before);
  CHECK(events.take(r).empty());
}
