// queueStats-3.lua: one name's numbers in a shard and the stamp of its oldest ready job.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
using jq::redis::bindings::QueueStats;
using jq::store::JobState;

namespace {

// {ready, scheduled, running, dead, oldest_stamp_us}
std::vector<std::int64_t> queue_stats(SyncRedis& r, const jq::redis::Keys& keys, int shard,
                                      const std::string& name) {
  auto reply = r.eval(QueueStats::call(QueueStats::keys(keys, shard, name), {name}));
  REQUIRE(QueueStats::decode(reply));
  return integers(reply);
}

}  // namespace

TEST_CASE("queueStats of a name with no jobs is all zero with no oldest stamp", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  CHECK(queue_stats(r, keys, 0, "email") == std::vector<std::int64_t>{0, 0, 0, 0, -1});
}

TEST_CASE("queueStats counts ready jobs and reads the other states from the counts hash",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  push_jobs(r, keys, 0, {{}, {}, {}, {.name = "resize"}});
  reserve_jobs(r, keys, 0, "email", 1);
  r.call({"HSET", keys.counts(0), "scheduled:email", "4", "dead:email", "2", "dead:resize", "9"});
  const auto ready_before = ready_queue(r, keys, 0, "email");
  const std::string counts_before = dump(r, keys.counts(0));

  CHECK(queue_stats(r, keys, 0, "email") == std::vector<std::int64_t>{2, 4, 1, 2, kStampUs});
  CHECK(queue_stats(r, keys, 0, "resize") == std::vector<std::int64_t>{1, 0, 0, 9, kStampUs});
  CHECK(ready_queue(r, keys, 0, "email") == ready_before);
  CHECK(dump(r, keys.counts(0)) == counts_before);
}

TEST_CASE("the oldest ready job is found behind the head, among other priorities", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  push_jobs(r, keys, 0, {{.priority = 1}}, kNowMs, kStampUs + 300);
  push_jobs(r, keys, 0, {{.priority = 1}}, kNowMs, kStampUs + 100);
  push_jobs(r, keys, 0, {{.priority = 9}}, kNowMs, kStampUs + 20);  // the oldest
  push_jobs(r, keys, 0, {{.priority = 5}}, kNowMs, kStampUs + 50);
  push_jobs(r, keys, 0, {{.priority = 9}}, kNowMs, kStampUs + 400);

  CHECK(queue_stats(r, keys, 0, "email")[4] == kStampUs + 20);
}

TEST_CASE("beyond 100 distinct priorities the oldest stamp is the oldest of the first 100",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  std::vector<PushArgs> batch;
  for (int p = 0; p < 100; ++p) batch.push_back({.priority = p});
  push_jobs(r, keys, 0, batch, kNowMs, kStampUs + 1000);
  push_jobs(r, keys, 0, {{.priority = 100}}, kNowMs, kStampUs);  // 101st priority, older

  auto stats = queue_stats(r, keys, 0, "email");
  CHECK(stats[0] == 101);
  CHECK(stats[4] == kStampUs + 1000);  // a lower bound of the lag

  push_jobs(r, keys, 0, {{.priority = -1}}, kNowMs, kStampUs + 1);  // within the first 100
  CHECK(queue_stats(r, keys, 0, "email")[4] == kStampUs + 1);
}

TEST_CASE("a cancelled job's member left in a list does not count as the oldest", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const auto f = fields_of(push_jobs(r, keys, 0, {{}}, kNowMs, kStampUs));
  push_jobs(r, keys, 0, {{}}, kNowMs, kStampUs + 10);
  push_jobs(r, keys, 0, {{}}, kNowMs, kStampUs + 20);
  // Cancelled as cancelJob does in the middle of a list: record and count gone, member left.
  r.call({"HDEL", keys.jobs_prefix(0) + f[0].substr(0, 8), f[0].substr(8)});
  r.call({"HINCRBY", keys.counts(0), "ready:email", "-1"});
  CHECK(ready_queue(r, keys, 0, "email").size() == 3);

  CHECK(queue_stats(r, keys, 0, "email") == std::vector<std::int64_t>{2, 0, 0, 0, kStampUs + 10});
}

TEST_CASE("with nothing ready there is no oldest stamp, whatever members are left", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const auto f = fields_of(push_jobs(r, keys, 0, {{}}, kNowMs, kStampUs));
  r.call({"HDEL", keys.jobs_prefix(0) + f[0].substr(0, 8), f[0].substr(8)});
  r.call({"HINCRBY", keys.counts(0), "ready:email", "-1"});

  CHECK(queue_stats(r, keys, 0, "email") == std::vector<std::int64_t>{0, 0, 0, 0, -1});
}
