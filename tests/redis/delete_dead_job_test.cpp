// deleteDeadJob-3.lua: a dead job is removed for good; nothing else can be.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
using jq::redis::bindings::DeleteDeadJob;
using jq::store::JobState;

namespace {

DeleteDeadJob::Status delete_dead_job(SyncRedis& r, const jq::redis::Keys& keys, int shard,
                                      const std::string& field) {
  auto status =
      DeleteDeadJob::decode(r.eval(DeleteDeadJob::call(DeleteDeadJob::keys(keys, shard), {field})));
  REQUIRE(status);
  return *status;
}

void put_dead(SyncRedis& r, const jq::redis::Keys& keys, const std::string& field) {
  put_record(r, keys, 0, field, record_in(JobState::dead, 4));
  r.call({"ZADD", keys.dead(0), std::to_string(kNowMs), field});
  r.call({"HINCRBY", keys.counts(0), "dead:email", "1"});
}

}  // namespace

TEST_CASE("deleting a dead job removes it from the dead set, the jobs hash and the counts",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_dead(r, keys, "00000000A");
  put_dead(r, keys, "00000000B");

  CHECK(delete_dead_job(r, keys, 0, "00000000A") == DeleteDeadJob::Status::deleted);
  CHECK_FALSE(raw_record(r, keys, 0, "00000000A"));
  CHECK(zrange(r, keys.dead(0)) ==
        std::vector<std::pair<std::string, std::int64_t>>{{"00000000B", kNowMs}});
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"dead:email", "1"}});

  CHECK(delete_dead_job(r, keys, 0, "00000000B") == DeleteDeadJob::Status::deleted);
  CHECK_FALSE(exists(r, keys.counts(0)));
  CHECK_FALSE(exists(r, keys.jobs_prefix(0)));
}

TEST_CASE("a kept result of a deleted dead job stays until fetched or expired", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_dead(r, keys, "00000000A");
  r.call(
      {"SET", keys.done(0, "00000000A"), pack_record(record_in(JobState::dead, 4)), "EX", "3600"});

  CHECK(delete_dead_job(r, keys, 0, "00000000A") == DeleteDeadJob::Status::deleted);
  CHECK(exists(r, keys.done(0, "00000000A")));
}

TEST_CASE("only a dead job can be deleted: anything else answers -1 and changes nothing",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const JobState state = GENERATE(JobState::queued, JobState::scheduled, JobState::running);
  put_record(r, keys, 0, "00000000A", record_in(state, 1));
  const std::string before = job_buckets_dump(r, keys, 0);

  CHECK(delete_dead_job(r, keys, 0, "00000000A") == DeleteDeadJob::Status::not_found);
  CHECK(delete_dead_job(r, keys, 0, "00000000Z") == DeleteDeadJob::Status::not_found);
  CHECK(job_buckets_dump(r, keys, 0) == before);
}
