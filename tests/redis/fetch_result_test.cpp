// fetchResult-3.lua: a kept result is handed out exactly once; a pusher about to wait marks the
// job watched.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
using jq::redis::bindings::FetchResult;
using jq::store::JobState;

namespace {

Reply fetch_result(SyncRedis& r, const jq::redis::Keys& keys, int shard, const std::string& field,
                   std::int64_t watch_ms = 0) {
  jq::redis::Reply reply =
      r.eval(FetchResult::call(FetchResult::keys(keys, shard, field), {field, watch_ms}));
  REQUIRE(FetchResult::decode(reply));
  return reply;
}

}  // namespace

TEST_CASE("fetchResult hands out a kept result once and deletes the done key", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto finished = record_in(JobState::succeeded, 1);
  finished.keep_result = true;
  finished.result = std::string("\x82\xa2ok\xc3\xa1v\xc4\x03\x00\r\n", 12);
  const std::string done = keys.done(0, "00000000A");
  r.call({"SET", done, pack_record(finished), "EX", "3600"});

  auto first = fetch_result(r, keys, 0, "00000000A");
  REQUIRE(first.is_array());
  REQUIRE(first.elements.size() == 2);
  CHECK(first.elements[0].integer == 1);
  CHECK(first.elements[1].str == finished.result);
  CHECK_FALSE(exists(r, done));

  CHECK(integers(fetch_result(r, keys, 0, "00000000A")) == std::vector<std::int64_t>{0});
}

TEST_CASE("fetchResult of an unfinished job reports its state and attempts", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();

  SECTION("queued") {
    auto f = fields_of(push_jobs(r, keys, 0, {{}}));
    const std::string before = job_buckets_dump(r, keys, 0);
    CHECK(integers(fetch_result(r, keys, 0, f[0])) == std::vector<std::int64_t>{2, 1, 0, 0});
    CHECK(job_buckets_dump(r, keys, 0) == before);
  }
  SECTION("scheduled for a retry") {
    put_record(r, keys, 0, "00000000A", record_in(JobState::scheduled, 2));
    CHECK(integers(fetch_result(r, keys, 0, "00000000A")) == std::vector<std::int64_t>{2, 2, 2, 0});
  }
  SECTION("running") {
    put_record(r, keys, 0, "00000000A", record_in(JobState::running, 1));
    const std::string before = job_buckets_dump(r, keys, 0);
    CHECK(integers(fetch_result(r, keys, 0, "00000000A")) == std::vector<std::int64_t>{2, 3, 1, 0});
    CHECK(job_buckets_dump(r, keys, 0) == before);
  }
}

TEST_CASE("fetchResult of a dead job has nothing to give and keeps the record", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_record(r, keys, 0, "00000000A", record_in(JobState::dead, 4));

  CHECK(integers(fetch_result(r, keys, 0, "00000000A")) == std::vector<std::int64_t>{0});
  CHECK(read_record(r, keys, 0, "00000000A"));
}

TEST_CASE("fetchResult of an unknown job has nothing to give", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  CHECK(integers(fetch_result(r, keys, 0, "00000000Z")) == std::vector<std::int64_t>{0});
}

TEST_CASE("fetchResult of a pending job that keeps its result marks it watched for the time asked",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {{.keep_result = true}}));
  const std::string watch = keys.watch(0, f[0]);

  CHECK(integers(fetch_result(r, keys, 0, f[0], 30000)) == std::vector<std::int64_t>{2, 1, 0, 1});
  const auto ttl = r.call({"PTTL", watch}).integer;
  CHECK(ttl > 29000);
  CHECK(ttl <= 30000);
  // A shorter wait from another pusher does not cut the first one's watch short.
  fetch_result(r, keys, 0, f[0], 1000);
  CHECK(r.call({"PTTL", watch}).integer > 29000);
  fetch_result(r, keys, 0, f[0], 60000);
  CHECK(r.call({"PTTL", watch}).integer > 59000);
  // It counts the polls that started waiting (completeJobs: is there one besides mine?).
  CHECK(r.call({"GET", watch}).str == "3");
}

TEST_CASE("fetchResult without a wait, or of a job whose result is not kept, marks nothing",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {{.keep_result = true}, {}}));

  fetch_result(r, keys, 0, f[0], 0);
  CHECK_FALSE(exists(r, keys.watch(0, f[0])));
  CHECK(integers(fetch_result(r, keys, 0, f[1], 30000)) == std::vector<std::int64_t>{2, 1, 0, 0});
  CHECK_FALSE(exists(r, keys.watch(0, f[1])));
  fetch_result(r, keys, 0, "00000000Z", 30000);
  CHECK_FALSE(exists(r, keys.watch(0, "00000000Z")));
}
