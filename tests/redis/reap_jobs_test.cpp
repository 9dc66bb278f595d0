// reapJobs-10.lua: attempts past their deadline fail as timeouts, exactly as failJob would fail
// them with should_retry.
#include <limits>

#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
using jq::redis::bindings::CompleteJobs;
using jq::redis::bindings::ReapJobs;
using jq::store::JobState;

namespace {

// {type: "failure", reason: "timeout"}
const std::string kTimeout("\x82\xa4type\xa7\x66\x61ilure\xa6reason\xa7timeout", 29);
constexpr std::int64_t kReapNowMs = kNowMs + 60000;

// The number of jobs reaped.
std::int64_t reap_jobs(SyncRedis& r, const jq::redis::Keys& keys, int shard, std::int64_t cutoff_ms,
                       int limit = 100) {
  Reply reply = r.eval(ReapJobs::call(ReapJobs::keys(keys, shard), {cutoff_ms,
                                                                    kReapNowMs,
                                                                    limit,
                                                                    kTimeout,
                                                                    "no answer before the deadline",
                                                                    {2000, 300000, 0, 600},
                                                                    keys.events_channel(shard),
                                                                    shard}));
  auto reaped = ReapJobs::decode(reply);
  REQUIRE(reaped);
  CHECK(reaped->leases.empty());  // none of these jobs matched a constraint
  return reaped->reaped;
}

jq::store::JobRecord running(int attempts, int max_retry, bool keep_result = false) {
  auto rec = record_in(JobState::running, attempts);
  rec.max_retry = max_retry;
  rec.keep_result = keep_result;
  return rec;
}

}  // namespace

TEST_CASE("reapJobs reaps attempts whose deadline is before the cutoff, not at it", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_running(r, keys, 0, "00000000A", running(1, 3), kNowMs - 1);
  put_running(r, keys, 0, "00000000B", running(1, 3), kNowMs);
  put_running(r, keys, 0, "00000000C", running(1, 3), kNowMs + 1);

  CHECK(reap_jobs(r, keys, 0, kNowMs) == 1);
  CHECK(read_record(r, keys, 0, "00000000A")->state == JobState::scheduled);
  CHECK(read_record(r, keys, 0, "00000000B")->state == JobState::running);
  CHECK(running_deadlines(r, keys.inflight(0)) ==
        std::vector<std::pair<std::string, std::int64_t>>{{"00000000B", kNowMs},
                                                          {"00000000C", kNowMs + 1}});
}

TEST_CASE("a reaped attempt with retries left is scheduled like a failure that may retry",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  put_running(r, keys, 0, "00000000A", running(2, 3), kNowMs);

  CHECK(reap_jobs(r, keys, 0, kReapNowMs) == 1);

  auto rec = read_record(r, keys, 0, "00000000A");
  REQUIRE(rec);
  CHECK(rec->state == JobState::scheduled);
  CHECK(rec->attempts == 2);
  CHECK(rec->last_error == "no answer before the deadline");
  const std::int64_t due = kReapNowMs + 4000;  // base 2000 * 2^(2-1), no jitter
  CHECK(zrange(r, keys.scheduled(0)) ==
        std::vector<std::pair<std::string, std::int64_t>>{{"00000000A", due}});
  CHECK(running_deadlines(r, keys.inflight(0)).empty());
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"scheduled:email", "1"}});
  CHECK(hget(r, keys.stats(0), "failed") == "1");
  CHECK(hget(r, keys.stats(0), "retried") == "1");
  CHECK(events.take(r) == std::vector<std::string>{"s " + std::to_string(due)});
}

TEST_CASE("a reaped last attempt is dead with the timeout failure as its result", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  put_running(r, keys, 3, "00000000A", running(4, 3, true), kNowMs);
  put_running(r, keys, 3, "00000000B", running(1, 0, false), kNowMs);

  CHECK(reap_jobs(r, keys, 3, kReapNowMs) == 2);

  for (const std::string field : {"00000000A", "00000000B"}) {
    INFO(field);
    auto rec = read_record(r, keys, 3, field);
    REQUIRE(rec);
    CHECK(rec->state == JobState::dead);
    CHECK(rec->result == kTimeout);
    CHECK(zscore(r, keys.dead(3), field) == kReapNowMs);
  }
  // Only the job with keep_result is kept for its pusher, under its id "<shard>-<field>".
  const std::string done = keys.done(3, "00000000A");
  REQUIRE(exists(r, done));
  CHECK(jq::store::decode_record(r.call({"GET", done}).str)->result == kTimeout);
  const auto ttl = r.call({"TTL", done}).integer;
  CHECK(ttl > 590);
  CHECK(ttl <= 600);
  CHECK_FALSE(exists(r, keys.done(3, "00000000B")));
  CHECK(events.take(r) == std::vector<std::string>{"r 3-00000000A"});
  CHECK(hgetall(r, keys.counts(3)) == std::map<std::string, std::string>{{"dead:email", "2"}});
  CHECK(hget(r, keys.stats(3), "failed") == "2");
  CHECK(hget(r, keys.stats(3), "dead") == "2");
}

TEST_CASE("reapJobs reaps at most the limit, earliest deadline first", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_running(r, keys, 0, "00000000A", running(1, 3), kNowMs - 1);
  put_running(r, keys, 0, "00000000B", running(1, 3), kNowMs - 3);
  put_running(r, keys, 0, "00000000C", running(1, 3), kNowMs - 2);

  CHECK(reap_jobs(r, keys, 0, kReapNowMs, 2) == 2);
  CHECK(running_deadlines(r, keys.inflight(0)) ==
        std::vector<std::pair<std::string, std::int64_t>>{{"00000000A", kNowMs - 1}});
  CHECK(hgetall(r, keys.counts(0)) ==
        std::map<std::string, std::string>{{"running:email", "1"}, {"scheduled:email", "2"}});
}

TEST_CASE("an in-flight field without a running record is removed and not counted", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_record(r, keys, 0, "00000000B", record_in(JobState::queued));
  const std::string queued_before = *raw_record(r, keys, 0, "00000000B");
  r.call({"ZADD", keys.inflight(0), std::to_string(kNowMs), "00000000A", std::to_string(kNowMs),
          "00000000B"});

  CHECK(reap_jobs(r, keys, 0, kReapNowMs) == 0);
  CHECK(running_deadlines(r, keys.inflight(0)).empty());
  CHECK(raw_record(r, keys, 0, "00000000B") == queued_before);
  CHECK_FALSE(exists(r, keys.stats(0)));
  CHECK_FALSE(exists(r, keys.scheduled(0)));
}

TEST_CASE("a late answer for a reaped attempt is ignored", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string field = push_and_reserve(r, keys, 0);
  REQUIRE(reap_jobs(r, keys, 0, kReapNowMs) == 1);
  const std::string before = job_buckets_dump(r, keys, 0);

  auto late =
      r.eval(CompleteJobs::call(CompleteJobs::keys(keys, 0),
                                {3600, keys.events_channel(0), 0, kNowMs, {{field, 1, "\xc0"}}}));
  CHECK(CompleteJobs::decode(late, 1).value() ==
        std::vector<CompleteJobs::Status>{CompleteJobs::Status::stale});
  CHECK(job_buckets_dump(r, keys, 0) == before);
}

// Redis keeps a zset of up to 128 short members as a listpack, where every add and removal
// walks the list: the keeper makes the inflight zset a skiplist from its first job on.
TEST_CASE("the inflight zset is a skiplist from its first job on, and its keeper is no job",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string field = push_and_reserve(r, keys, 0, {.timeout_ms = 5000});
  CHECK(r.call({"OBJECT", "ENCODING", keys.inflight(0)}).str == "skiplist");
  CHECK(running_deadlines(r, keys.inflight(0)) ==
        std::vector<std::pair<std::string, std::int64_t>>{{field, kNowMs + 5000}});

  // Reaped, its job leaves; the keeper is never past a cutoff, and the zset stays a skiplist.
  CHECK(reap_jobs(r, keys, 0, std::numeric_limits<std::int64_t>::max()) == 1);
  CHECK(reap_jobs(r, keys, 0, std::numeric_limits<std::int64_t>::max()) == 0);
  CHECK(running_deadlines(r, keys.inflight(0)).empty());
  CHECK(r.call({"OBJECT", "ENCODING", keys.inflight(0)}).str == "skiplist");
}
