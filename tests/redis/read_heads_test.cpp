// readHeads-2.lua: the heads of several queues of one shard in one call, as reserveJobs with max 0
// answers each.
#include <catch2/catch.hpp>

#include "src/redis/bindings/read_heads.hpp"
#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::bindings::ReadHeads;
using jq::redis::bindings::ReserveJobs;

namespace {

std::vector<std::optional<ReadHeads::Head>> read_heads(SyncRedis& r, const jq::redis::Keys& keys,
                                                       int shard, std::vector<std::string> names) {
  const std::size_t n = names.size();
  auto reply = r.eval(ReadHeads::call(ReadHeads::keys(keys, shard), {std::move(names)}));
  auto heads = ReadHeads::decode(std::move(reply), n);
  REQUIRE(heads);
  return *heads;
}

}  // namespace

TEST_CASE("readHeads answers each queue's head as reserveJobs with max 0 does, in order",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  push_jobs(r, keys, 2, {{.name = "email", .priority = 5}, {.name = "email", .priority = 1}});
  push_jobs(r, keys, 2, {{.name = "sms", .priority = -4}});
  push_jobs(r, keys, 3, {{.name = "push", .priority = 0}});  // another shard: not read below

  auto heads = read_heads(r, keys, 2, {"sms", "push", "email"});
  REQUIRE(heads.size() == 3);
  for (std::size_t i : {0u, 2u}) {
    const std::string name = i == 0 ? "sms" : "email";
    auto one = ReserveJobs::decode(reserve_jobs_reply(r, keys, 2, name, 0));
    REQUIRE(one);
    REQUIRE(one->head);
    REQUIRE(heads[i]);
    CHECK(heads[i]->member == one->head->member);
    CHECK(heads[i]->priority == one->head->priority);
  }
  CHECK(heads[0]->priority == -4);
  CHECK(heads[2]->priority == 1);
  CHECK_FALSE(heads[1]);  // "push" has jobs in shard 3 only
}

TEST_CASE("readHeads skips cancelled jobs' members at a head and drops them", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {{.priority = 1}, {.priority = 1}, {.priority = 2}}));
  push_jobs(r, keys, 0, {{.name = "sms"}});
  // f[0] and f[1] cancelled (their records deleted, as cancelJob does): f[2] is the head.
  for (int i : {0, 1}) {
    const RecordAt at = record_at(r, keys, 0, f[i]);
    r.call({"HDEL", at.bucket, at.slot});
  }

  auto heads = read_heads(r, keys, 0, {"email", "sms"});
  REQUIRE(heads[0]);
  CHECK(heads[0]->member == member_of(r, keys, 0, f[2]));
  CHECK(heads[0]->priority == 2);
  REQUIRE(ready_queue(r, keys, 0, "email").size() == 1);  // the two members are gone
  CHECK(heads[1]);

  // Every job cancelled: the queue reads empty, and its keys are gone.
  const RecordAt at = record_at(r, keys, 0, f[2]);
  r.call({"HDEL", at.bucket, at.slot});
  CHECK_FALSE(read_heads(r, keys, 0, {"email"})[0]);
  CHECK(ready_queue(r, keys, 0, "email").empty());
}

// Names are looked at in chunks, a chunk whose queues all have no key answered at once: heads in
// some chunks and not others, and a queue left with only a cancelled job's member, all answered
// as name by name.
TEST_CASE("readHeads answers many names, most of them empty, as reserveJobs does", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  std::vector<std::string> names;
  // Chunks of 32, 32, 32 and 1: the last one holds a job.
  for (int i = 0; i < 97; ++i) names.push_back("n" + std::to_string(i));
  for (int i : {5, 40, 41, 96}) push_jobs(r, keys, 1, {{.name = names[i], .priority = i}});
  const auto cancelled = fields_of(push_jobs(r, keys, 1, {{.name = names[70]}}));
  const RecordAt at = record_at(r, keys, 1, cancelled[0]);
  r.call({"HDEL", at.bucket, at.slot});

  auto heads = read_heads(r, keys, 1, names);
  REQUIRE(heads.size() == names.size());
  int found = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto one = ReserveJobs::decode(reserve_jobs_reply(r, keys, 1, names[i], 0));
    REQUIRE(one);
    REQUIRE(heads[i].has_value() == one->head.has_value());
    if (!heads[i]) continue;
    ++found;
    CHECK(heads[i]->member == one->head->member);
    CHECK(heads[i]->priority == static_cast<std::int64_t>(i));
  }
  CHECK(found == 4);
  CHECK(ready_queue(r, keys, 1, names[70]).empty());  // the cancelled member was dropped
}
