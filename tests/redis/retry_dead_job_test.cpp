// retryDeadJob-6.lua: a dead job is ready again at once, attempts reset, as if pushed now.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
using jq::redis::bindings::RetryDeadJob;
using jq::store::JobState;

namespace {

constexpr std::int64_t kRetryStampUs = kStampUs + 5000000;

RetryDeadJob::Status retry_dead_job(SyncRedis& r, const jq::redis::Keys& keys, int shard,
                                    const std::string& field) {
  auto status = RetryDeadJob::decode(
      r.eval(RetryDeadJob::call(RetryDeadJob::keys(keys, shard, field),
                                {field, kRetryStampUs, keys.events_channel(shard), shard})));
  REQUIRE(status);
  return *status;
}

// A dead job as failJob leaves it, with its failure kept for the pusher.
void put_dead(SyncRedis& r, const jq::redis::Keys& keys, const std::string& field,
              const std::string& name = "email") {
  auto rec = record_in(JobState::dead, 4);
  rec.name = name;
  rec.priority = -9;
  rec.keep_result = true;
  rec.last_error = "boom";
  rec.result = "\x81\xa4type\xa7\x66\x61ilure";
  put_record(r, keys, 0, field, rec, "000000000" + field);
  r.call({"ZADD", keys.dead(0), std::to_string(kNowMs), field});
  r.call({"HINCRBY", keys.counts(0), "dead:" + name, "1"});
  r.call({"SET", keys.done(0, field), pack_record(rec), "EX", "3600"});
}

}  // namespace

TEST_CASE("a retried dead job is queued with no attempts, its kept failure withdrawn", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  put_dead(r, keys, "00000000A");
  put_dead(r, keys, "00000000B");

  CHECK(retry_dead_job(r, keys, 0, "00000000A") == RetryDeadJob::Status::ready);

  auto rec = read_record(r, keys, 0, "00000000A");
  REQUIRE(rec);
  CHECK(rec->state == JobState::queued);
  CHECK(rec->attempts == 0);
  CHECK(rec->result.empty());
  CHECK(rec->last_error == "boom");
  const std::string member = base62(kRetryStampUs, 9) + "00000000A";
  CHECK(member_of(r, keys, 0, "00000000A") == member);
  CHECK(ready_queue(r, keys, 0, "email") ==
        std::vector<std::pair<std::string, std::int64_t>>{{member, -9}});
  CHECK(zrange(r, keys.dead(0)) ==
        std::vector<std::pair<std::string, std::int64_t>>{{"00000000B", kNowMs}});
  CHECK_FALSE(exists(r, keys.done(0, "00000000A")));
  CHECK(exists(r, keys.done(0, "00000000B")));
  CHECK(hgetall(r, keys.counts(0)) ==
        std::map<std::string, std::string>{{"dead:email", "1"}, {"ready:email", "1"}});
  CHECK(events.take(r) == std::vector<std::string>{"p email 0 -9 " + member});
}

TEST_CASE("retrying the last dead job of a name leaves no dead count", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_dead(r, keys, "00000000A", "resize");
  CHECK(retry_dead_job(r, keys, 0, "00000000A") == RetryDeadJob::Status::ready);
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"ready:resize", "1"}});
  CHECK(ready_queue(r, keys, 0, "resize").size() == 1);
}

TEST_CASE("only a dead job can be retried: anything else answers -1 and changes nothing",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  const JobState state = GENERATE(JobState::queued, JobState::scheduled, JobState::running);
  put_record(r, keys, 0, "00000000A", record_in(state, 1));
  const std::string before = job_buckets_dump(r, keys, 0);

  CHECK(retry_dead_job(r, keys, 0, "00000000A") == RetryDeadJob::Status::not_found);
  CHECK(retry_dead_job(r, keys, 0, "00000000Z") == RetryDeadJob::Status::not_found);
  CHECK(job_buckets_dump(r, keys, 0) == before);
  CHECK(ready_queue(r, keys, 0, "email").empty());
  CHECK(events.take(r).empty());
}
