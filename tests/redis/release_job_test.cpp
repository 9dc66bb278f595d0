// releaseJob-5.lua: an attempt that never happened is given back; the job keeps its place.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
using jq::redis::bindings::ReleaseJob;
using jq::store::JobState;

namespace {

// `token`: the reservation's ("t" for reserve_jobs; put_running's records carry none).
ReleaseJob::Status release_job(SyncRedis& r, const jq::redis::Keys& keys, int shard,
                               const std::string& field, int attempt,
                               const std::string& token = "t") {
  auto status = ReleaseJob::decode(
      r.eval(ReleaseJob::call(ReleaseJob::keys(keys, shard, "email"),
                              {field, attempt, keys.events_channel(shard), shard, token})));
  REQUIRE(status);
  return *status;
}

}  // namespace

TEST_CASE("a released job is ready again in its old place and the attempt does not count",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  auto f = fields_of(push_jobs(r, keys, 0, {{.priority = 2}, {.priority = 2}}));
  const std::string member = member_of(r, keys, 0, f[0]);
  REQUIRE(reserve_jobs(r, keys, 0, "email", 1).elements.size() == 2);  // f[0]
  events.take(r);

  CHECK(release_job(r, keys, 0, f[0], 1) == ReleaseJob::Status::released);

  auto rec = read_record(r, keys, 0, f[0]);
  REQUIRE(rec);
  CHECK(rec->state == JobState::queued);
  CHECK(rec->attempts == 0);
  CHECK(member_of(r, keys, 0, f[0]) == member);
  // Ahead of the job pushed after it, as before the reservation.
  CHECK(ready_queue(r, keys, 0, "email") == std::vector<std::pair<std::string, std::int64_t>>{
                                                {member, 2}, {member_of(r, keys, 0, f[1]), 2}});
  CHECK(running_deadlines(r, keys.inflight(0)).empty());
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"ready:email", "2"}});
  CHECK(hget(r, keys.stats(0), "dispatched") == "1");
  CHECK(events.take(r) == std::vector<std::string>{"p email 0 2 " + member});
}

// Jobs reserved together (ahead of a busy worker) and given back one by one, in whatever order:
// each takes its own turn again, so they run in push order, not the last given back first.
TEST_CASE("jobs released one by one line up in their push order, whatever the order of release",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {{}, {}, {}, {}, {}}));
  REQUIRE(reserve_jobs(r, keys, 0, "email", 4).elements.size() == 8);  // f[0] .. f[3]
  CHECK(release_job(r, keys, 0, f[0], 1) == ReleaseJob::Status::released);
  CHECK(release_job(r, keys, 0, f[2], 1) == ReleaseJob::Status::released);
  CHECK(release_job(r, keys, 0, f[1], 1) == ReleaseJob::Status::released);
  CHECK(release_job(r, keys, 0, f[3], 1) == ReleaseJob::Status::released);
  std::vector<std::string> order;
  for (const auto& [member, priority] : ready_queue(r, keys, 0, "email")) order.push_back(member);
  std::vector<std::string> pushed;
  for (const std::string& field : f) pushed.push_back(member_of(r, keys, 0, field));
  CHECK(order == pushed);
}

TEST_CASE("a released retry goes back to attempts it had before the reservation", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  push_and_reserve(r, keys, 0);  // another running job of the name
  put_running(r, keys, 0, "00000000A", record_in(JobState::running, 3));

  CHECK(release_job(r, keys, 0, "00000000A", 3, "") == ReleaseJob::Status::released);
  CHECK(read_record(r, keys, 0, "00000000A")->attempts == 2);
  CHECK(hgetall(r, keys.counts(0)) ==
        std::map<std::string, std::string>{{"ready:email", "1"}, {"running:email", "1"}});
  CHECK(ready_priority(r, keys, 0, "email", member_of(r, keys, 0, "00000000A")) == 0);
}

TEST_CASE("a release for another attempt or a job not running changes nothing", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  put_running(r, keys, 0, "00000000A", record_in(JobState::running, 2));
  put_record(r, keys, 0, "00000000B", record_in(JobState::scheduled, 2));
  const std::string jobs_before = job_buckets_dump(r, keys, 0);
  const std::string inflight_before = dump(r, keys.inflight(0));
  const std::string counts_before = dump(r, keys.counts(0));

  CHECK(release_job(r, keys, 0, "00000000A", 1, "") == ReleaseJob::Status::stale);
  CHECK(release_job(r, keys, 0, "00000000A", 3, "") == ReleaseJob::Status::stale);
  CHECK(release_job(r, keys, 0, "00000000B", 2, "") == ReleaseJob::Status::stale);
  CHECK(release_job(r, keys, 0, "00000000Z", 1, "") == ReleaseJob::Status::stale);
  CHECK(job_buckets_dump(r, keys, 0) == jobs_before);
  CHECK(dump(r, keys.inflight(0)) == inflight_before);
  CHECK(dump(r, keys.counts(0)) == counts_before);
  CHECK(ready_queue(r, keys, 0, "email").empty());
  CHECK(events.take(r).empty());
}

// A given-back attempt does not count, so the next reservation runs the job under the same
// attempt number: a release sent again after its answer was lost must not give that one back.
TEST_CASE("a release names the reservation it gives back: one sent again finds a later one alone",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string field = fields_of(push_jobs(r, keys, 0, {{}}))[0];
  REQUIRE(reserve_jobs(r, keys, 0, "email", 1, kNowMs, "", "", "first").elements.size() == 2);
  CHECK(release_job(r, keys, 0, field, 1, "another") == ReleaseJob::Status::stale);
  CHECK(release_job(r, keys, 0, field, 1, "first") == ReleaseJob::Status::released);
  REQUIRE(reserve_jobs(r, keys, 0, "email", 1, kNowMs, "", "", "second").elements.size() == 2);
  const std::string jobs_before = job_buckets_dump(r, keys, 0);
  const std::string inflight_before = dump(r, keys.inflight(0));

  CHECK(release_job(r, keys, 0, field, 1, "first") == ReleaseJob::Status::stale);  // sent again
  CHECK(job_buckets_dump(r, keys, 0) == jobs_before);
  CHECK(dump(r, keys.inflight(0)) == inflight_before);
  CHECK(read_record(r, keys, 0, field)->state == JobState::running);
  CHECK(release_job(r, keys, 0, field, 1, "second") == ReleaseJob::Status::released);
}

namespace {

// The job's first attempt succeeds (shard 0).
void succeed_first_attempt(SyncRedis& r, const jq::redis::Keys& keys, const std::string& field) {
  using jq::redis::bindings::CompleteJobs;
  CompleteJobs::Args done{3600, keys.events_channel(0), 0, kNowMs, {{field, 1, "\xc0"}}};
  REQUIRE(CompleteJobs::decode(
      r.eval(CompleteJobs::call(CompleteJobs::keys(keys, 0), std::move(done))), 1));
}

}  // namespace

TEST_CASE(
    "a job with unique_until started takes its claim back when its attempt is given back, "
    "with the TTL it had, unless a new job took it meanwhile",
    "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string claim = keys.unique_prefix(0) + "email k";
  const PushArgs job{.unique_key = "k", .unique_until_started = true, .unique_for_ms = 60000};
  const std::string field = push_and_reserve(r, keys, 0, job);
  CHECK_FALSE(exists(r, claim));  // started: the name is free for a new job

  SECTION("nothing pushed meanwhile: the claim comes back, and is a duplicate's holder again") {
    CHECK(release_job(r, keys, 0, field, 1) == ReleaseJob::Status::released);
    CHECK(r.call({"GET", claim}).str == field);
    const auto pttl = r.call({"PTTL", claim}).integer;
    CHECK(pttl > 50000);
    CHECK(pttl <= 60000);
    auto again = fields_of(push_jobs(r, keys, 0, {job}));
    CHECK(again[0] == field);  // the duplicate names the job holding the claim
    CHECK(record_count(r, keys, 0) == 1);
    // Its next start lets go of it again, and its end leaves nothing behind.
    REQUIRE(reserve_jobs(r, keys, 0, "email", 1).elements.size() == 2);
    CHECK_FALSE(exists(r, claim));
    succeed_first_attempt(r, keys, field);
  }
  SECTION("a new job took the claim: the given-back job does not take it from it") {
    const std::string newer = fields_of(push_jobs(r, keys, 0, {job}))[0];
    REQUIRE(newer != field);
    CHECK(release_job(r, keys, 0, field, 1) == ReleaseJob::Status::released);
    CHECK(r.call({"GET", claim}).str == newer);
  }
  SECTION("a new job took the claim and started: the job given back, not started, holds it again") {
    const std::string newer = fields_of(push_jobs(r, keys, 0, {job}))[0];
    const auto taken = reserve_jobs(r, keys, 0, "email", 1);
    REQUIRE(taken.elements.size() == 2);
    CHECK(taken.elements[0].str == newer);
    CHECK_FALSE(exists(r, claim));
    // Both parked their claim: under one name, the newer one's took the place of the first's.
    CHECK(release_job(r, keys, 0, field, 1) == ReleaseJob::Status::released);
    CHECK(r.call({"GET", claim}).str == field);
    CHECK(fields_of(push_jobs(r, keys, 0, {job}))[0] == field);  // its duplicate
    succeed_first_attempt(r, keys, newer);
  }
  SECTION("a claim parked by an earlier build, under the claim's name alone, is taken back") {
    r.call({"RENAME", keys.unique_prefix(0) + "!" + field + " email k",
            keys.unique_prefix(0) + "!email k"});
    CHECK(release_job(r, keys, 0, field, 1) == ReleaseJob::Status::released);
    CHECK(r.call({"GET", claim}).str == field);
  }
  CHECK(r.call({"KEYS", keys.unique_prefix(0) + "!*"}).elements.empty());
}
