// updateWorkerStats-2.lua: counts and health marks go to the workers still registered only.
#include <catch2/catch.hpp>

#include "src/redis/bindings/update_worker_stats.hpp"
#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::bindings::UpdateWorkerStats;

namespace {

std::int64_t update(SyncRedis& r, const jq::redis::Keys& keys,
                    std::vector<UpdateWorkerStats::Worker> workers) {
  auto updated = UpdateWorkerStats::decode(
      r.eval(UpdateWorkerStats::call(UpdateWorkerStats::keys(keys), {std::move(workers)})));
  REQUIRE(updated);
  return *updated;
}

}  // namespace

TEST_CASE("updateWorkerStats counts for registered workers and leaves removed ones alone",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  r.call({"HSET", keys.workers(), "w1", R"({"url":"http://a/","names":["*"],"concurrency":1})"});

  CHECK(update(r, keys,
               {{.id = "w1", .ended = 3, .succeeded = 2, .failed = 1, .last_error = "boom"},
                {.id = "w9", .ended = 1, .succeeded = 1}}) == 1);
  CHECK(hgetall(r, keys.worker_stats("w1")) ==
        std::map<std::string, std::string>{
            {"dispatched", "3"}, {"succeeded", "2"}, {"failed", "1"}, {"last_error", "boom"}});
  CHECK_FALSE(exists(r, keys.worker_stats("w9")));  // removed: no stats made again

  // Marks set only what they name; counts of none leave the others.
  CHECK(update(r, keys, {{.id = "w1", .down_until_ms = 123}, {.id = "w9", .busy_until_ms = 5}}) ==
        1);
  CHECK(update(r, keys, {{.id = "w1", .ended = 1, .succeeded = 1, .busy_until_ms = 456}}) == 1);
  CHECK(hgetall(r, keys.worker_stats("w1")) ==
        std::map<std::string, std::string>{{"dispatched", "4"},
                                           {"succeeded", "3"},
                                           {"failed", "1"},
                                           {"last_error", "boom"},
                                           {"down_until_ms", "123"},
                                           {"busy_until_ms", "456"}});
  CHECK_FALSE(exists(r, keys.worker_stats("w9")));
}
