// cancelJob-8.lua: removes a job that has not started, keeping the counts in step; refuses
// running and finished ones.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::bindings::CancelJob;
using jq::store::JobState;

namespace {

CancelJob::Status cancel_job(SyncRedis& r, const jq::redis::Keys& keys, int shard,
                             const std::string& field) {
  auto status = CancelJob::decode(r.eval(CancelJob::call(
      CancelJob::keys(keys, shard, field), {field, kNowMs, keys.events_channel(shard), shard})));
  REQUIRE(status);
  return *status;
}

}  // namespace

TEST_CASE("a cancelled queued job loses its record and ready count, and is never reserved",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {{}, {}, {}, {.name = "resize"}}));

  CHECK(cancel_job(r, keys, 0, f[1]) == CancelJob::Status::cancelled);

  CHECK_FALSE(raw_record(r, keys, 0, f[1]));
  CHECK(read_record(r, keys, 0, f[0]));
  CHECK(hgetall(r, keys.counts(0)) ==
        std::map<std::string, std::string>{{"ready:email", "2"}, {"ready:resize", "1"}});
  // In the middle of its list its member stays until a reservation reaches it and drops it.
  CHECK(ready_queue(r, keys, 0, "email").size() == 3);
  auto taken = reserve_jobs(r, keys, 0, "email", 5);
  REQUIRE(taken.elements.size() == 4);
  CHECK(taken.elements[0].str == f[0]);
  CHECK(taken.elements[2].str == f[2]);
  CHECK(ready_queue(r, keys, 0, "email").empty());
  CHECK(ready_queue(r, keys, 0, "resize").size() == 1);
}

TEST_CASE("cancelling a job waiting for a retry removes it from the scheduled set", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_record(r, keys, 2, "00000000A", record_in(JobState::scheduled, 1));
  put_record(r, keys, 2, "00000000B", record_in(JobState::scheduled, 1));
  r.call({"ZADD", keys.scheduled(2), "1700000005000", "00000000A", "1700000009000", "00000000B"});
  r.call({"HSET", keys.counts(2), "scheduled:email", "2", "dead:email", "1"});

  CHECK(cancel_job(r, keys, 2, "00000000A") == CancelJob::Status::cancelled);

  CHECK_FALSE(raw_record(r, keys, 2, "00000000A"));
  auto scheduled = zrange(r, keys.scheduled(2));
  REQUIRE(scheduled.size() == 1);
  CHECK(scheduled[0].first == "00000000B");
  CHECK(read_record(r, keys, 2, "00000000B"));
  CHECK(hgetall(r, keys.counts(2)) ==
        std::map<std::string, std::string>{{"scheduled:email", "1"}, {"dead:email", "1"}});

  CHECK(cancel_job(r, keys, 2, "00000000B") == CancelJob::Status::cancelled);
  CHECK(hgetall(r, keys.counts(2)) == std::map<std::string, std::string>{{"dead:email", "1"}});
}

TEST_CASE("a cancelled job cannot be cancelled again", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {{}}));
  CHECK(cancel_job(r, keys, 0, f[0]) == CancelJob::Status::cancelled);
  CHECK(cancel_job(r, keys, 0, f[0]) == CancelJob::Status::not_found);
}

TEST_CASE("a running job is not cancelled and nothing changes", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_record(r, keys, 0, "00000000A", record_in(JobState::running, 1));
  r.call({"ZADD", keys.inflight(0), "1700000030000", "00000000A"});
  r.call({"HSET", keys.counts(0), "running:email", "1"});
  const std::string jobs_before = job_buckets_dump(r, keys, 0);
  const std::string inflight_before = dump(r, keys.inflight(0));
  const std::string counts_before = dump(r, keys.counts(0));

  CHECK(cancel_job(r, keys, 0, "00000000A") == CancelJob::Status::running);
  CHECK(job_buckets_dump(r, keys, 0) == jobs_before);
  CHECK(dump(r, keys.inflight(0)) == inflight_before);
  CHECK(dump(r, keys.counts(0)) == counts_before);
}

TEST_CASE("a dead job counts as finished and is not cancelled", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_record(r, keys, 0, "00000000A", record_in(JobState::dead, 4));
  r.call({"ZADD", keys.dead(0), "1700000030000", "00000000A"});
  const std::string jobs_before = job_buckets_dump(r, keys, 0);

  CHECK(cancel_job(r, keys, 0, "00000000A") == CancelJob::Status::finished);
  CHECK(job_buckets_dump(r, keys, 0) == jobs_before);
  CHECK(zrange(r, keys.dead(0)).size() == 1);
}

TEST_CASE("a succeeded job with a kept result is finished and not cancelled", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string done = keys.done(0, "00000000A");
  r.call({"SET", done, pack_record(record_in(JobState::succeeded, 1)), "EX", "3600"});

  CHECK(cancel_job(r, keys, 0, "00000000A") == CancelJob::Status::finished);
  CHECK(exists(r, done));
}

TEST_CASE("cancelling an unknown job answers -1", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  push_jobs(r, keys, 0, {{}});

  CHECK(cancel_job(r, keys, 0, "00000000Z") == CancelJob::Status::not_found);
  CHECK(record_count(r, keys, 0) == 1);
}

TEST_CASE("a cancelled job at either end of its ready list leaves it at once", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {{.priority = 3}, {.priority = 3}, {.priority = 3}}));

  CHECK(cancel_job(r, keys, 0, f[0]) == CancelJob::Status::cancelled);  // the front
  CHECK(cancel_job(r, keys, 0, f[2]) == CancelJob::Status::cancelled);  // the back
  const auto left = ready_queue(r, keys, 0, "email");
  REQUIRE(left.size() == 1);
  CHECK(left.front().first.ends_with(f[1]));

  CHECK(cancel_job(r, keys, 0, f[1]) ==
        CancelJob::Status::cancelled);  // the last one: the priority goes too
  CHECK(ready_queue(r, keys, 0, "email").empty());
  CHECK(r.call({"EXISTS", keys.ready(0, "email")}).integer == 0);
}
