// failJob-10.lua: a failed attempt retries after an exponential backoff while retries are left,
// else the job is dead; stale answers are ignored.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
using jq::redis::bindings::FailJob;
using jq::redis::bindings::PromoteJobs;
using jq::store::JobState;

namespace {

// {type: "failure", reason: "other"}
const std::string kFailure("\x82\xa4type\xa7\x66\x61ilure\xa6reason\xa5other", 27);

struct Failure {
  bool should_retry = true;
  std::int64_t now_ms = kNowMs + 1000;
  std::int64_t base_ms = 1000;
  std::int64_t max_ms = 300000;
  double jitter = 0;
  int result_ttl_s = 3600;
};

Reply fail_job(SyncRedis& r, const jq::redis::Keys& keys, int shard, const std::string& field,
               int attempt, const Failure& f = {}) {
  Reply reply = r.eval(
      FailJob::call(FailJob::keys(keys, shard), {field,
                                                 attempt,
                                                 kFailure,
                                                 f.should_retry,
                                                 "worker said no",
                                                 f.now_ms,
                                                 {f.base_ms, f.max_ms, f.jitter, f.result_ttl_s},
                                                 keys.events_channel(shard),
                                                 shard}));
  REQUIRE(FailJob::decode(reply));
  return reply;
}

// The delay failJob chose for a running job in attempt `attempt` (a fresh job each call).
std::int64_t backoff_of(SyncRedis& r, const jq::redis::Keys& keys, int attempt, const Failure& f) {
  static int n = 0;
  const std::string field = base62(++n, 9);
  auto rec = record_in(JobState::running, attempt);
  rec.max_retry = 1000;
  put_running(r, keys, 0, field, rec);
  auto reply = integers(fail_job(r, keys, 0, field, attempt, f));
  REQUIRE(reply.size() == 2);
  REQUIRE(reply[0] == 1);
  return reply[1] - f.now_ms;
}

}  // namespace

TEST_CASE("a failure with retries left schedules the job after the backoff", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  const std::string field = push_and_reserve(r, keys, 0);
  events.take(r);

  auto reply = integers(fail_job(r, keys, 0, field, 1));
  const std::int64_t due = kNowMs + 1000 + 1000;
  CHECK(reply == std::vector<std::int64_t>{1, due});

  auto rec = read_record(r, keys, 0, field);
  REQUIRE(rec);
  CHECK(rec->state == JobState::scheduled);
  CHECK(rec->attempts == 1);
  CHECK(rec->last_error == "worker said no");
  CHECK(rec->result.empty());
  CHECK(zrange(r, keys.scheduled(0)) ==
        std::vector<std::pair<std::string, std::int64_t>>{{field, due}});
  CHECK(running_deadlines(r, keys.inflight(0)).empty());
  CHECK_FALSE(exists(r, keys.dead(0)));
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"scheduled:email", "1"}});
  CHECK(hget(r, keys.stats(0), "failed") == "1");
  CHECK(hget(r, keys.stats(0), "retried") == "1");
  CHECK_FALSE(hget(r, keys.stats(0), "dead"));
  CHECK(events.take(r) == std::vector<std::string>{"s " + std::to_string(due)});
}

TEST_CASE("a job with max_retry 2 is retried after attempts 1 and 2 and dead after 3", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string field = push_and_reserve(r, keys, 0, {.max_retry = 2});
  auto promote = [&] {
    r.call({"ZADD", keys.scheduled(0), "0", field});  // due now: skip the wait
    return r.eval(
        PromoteJobs::call(PromoteJobs::keys(keys, 0), {kNowMs, 10, keys.events_channel(0), 0}));
  };

  CHECK(integers(fail_job(r, keys, 0, field, 1))[0] == 1);
  promote();
  REQUIRE(reserve_jobs(r, keys, 0, "email", 1).elements.size() == 2);
  CHECK(integers(fail_job(r, keys, 0, field, 2))[0] == 1);
  promote();
  REQUIRE(reserve_jobs(r, keys, 0, "email", 1).elements.size() == 2);
  CHECK(integers(fail_job(r, keys, 0, field, 3)) == std::vector<std::int64_t>{2});

  auto rec = read_record(r, keys, 0, field);
  REQUIRE(rec);
  CHECK(rec->state == JobState::dead);
  CHECK(rec->attempts == 3);
  CHECK(hget(r, keys.stats(0), "failed") == "3");
  CHECK(hget(r, keys.stats(0), "retried") == "2");
  CHECK(hget(r, keys.stats(0), "dead") == "1");
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"dead:email", "1"}});
}

TEST_CASE("a job with max_retry 0 is dead after its first failure", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string field = push_and_reserve(r, keys, 0, {.max_retry = 0});
  CHECK(integers(fail_job(r, keys, 0, field, 1)) == std::vector<std::int64_t>{2});
}

TEST_CASE("the backoff doubles per attempt from base, without jitter exactly", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const Failure f{.base_ms = 1500};
  CHECK(backoff_of(r, keys, 1, f) == 1500);
  CHECK(backoff_of(r, keys, 2, f) == 3000);
  CHECK(backoff_of(r, keys, 3, f) == 6000);
  CHECK(backoff_of(r, keys, 4, f) == 12000);
}

TEST_CASE("the backoff is capped at max", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  CHECK(backoff_of(r, keys, 10, {.base_ms = 1000, .max_ms = 5000}) == 5000);
  CHECK(backoff_of(r, keys, 1000, {.base_ms = 1000, .max_ms = 5000}) == 5000);
  for (int i = 0; i < 20; ++i) {
    const auto d = backoff_of(r, keys, 12, {.base_ms = 1000, .max_ms = 5000, .jitter = 0.2});
    CHECK(d >= 4000);
    CHECK(d <= 6000);
  }
}

TEST_CASE("with jitter j the backoff of attempt n is within base*2^(n-1)*(1 +/- j), and varies",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const Failure f{.base_ms = 1000, .jitter = 0.25};
  for (int attempt = 1; attempt <= 4; ++attempt) {
    INFO("attempt " << attempt);
    const double nominal = 1000.0 * std::pow(2.0, attempt - 1);
    std::set<std::int64_t> seen;
    for (int i = 0; i < 30; ++i) {
      const auto d = backoff_of(r, keys, attempt, f);
      CHECK(d >= static_cast<std::int64_t>(std::floor(nominal * 0.75)));
      CHECK(d <= static_cast<std::int64_t>(std::ceil(nominal * 1.25)));
      seen.insert(d);
    }
    CHECK(seen.size() > 1);
  }
}

TEST_CASE("a failure that asks for no retry makes the job dead with retries left", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  const std::string field = push_and_reserve(r, keys, 0, {.max_retry = 5});
  events.take(r);

  CHECK(integers(fail_job(r, keys, 0, field, 1, {.should_retry = false})) ==
        std::vector<std::int64_t>{2});

  auto rec = read_record(r, keys, 0, field);
  REQUIRE(rec);
  CHECK(rec->state == JobState::dead);
  CHECK(rec->result == kFailure);
  CHECK(rec->last_error == "worker said no");
  CHECK(zrange(r, keys.dead(0)) ==
        std::vector<std::pair<std::string, std::int64_t>>{{field, kNowMs + 1000}});
  CHECK(running_deadlines(r, keys.inflight(0)).empty());
  CHECK_FALSE(exists(r, keys.scheduled(0)));
  CHECK_FALSE(exists(r, keys.done(0, field)));
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"dead:email", "1"}});
  CHECK(hget(r, keys.stats(0), "failed") == "1");
  CHECK(hget(r, keys.stats(0), "dead") == "1");
  CHECK_FALSE(hget(r, keys.stats(0), "retried"));
  CHECK(events.take(r).empty());
}

TEST_CASE("a dead job with keep_result keeps the failure as its result and announces it",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  const std::string field = push_and_reserve(r, keys, 6, {.max_retry = 0, .keep_result = true});
  events.take(r);

  CHECK(integers(fail_job(r, keys, 6, field, 1, {.result_ttl_s = 60})) ==
        std::vector<std::int64_t>{2});

  const std::string done = keys.done(6, field);
  auto raw = r.call({"GET", done});
  REQUIRE(raw.is_string());
  CHECK(raw.str == raw_record(r, keys, 6, field));  // the dead record, also kept for the list
  auto rec = jq::store::decode_record(raw.str);
  REQUIRE(rec);
  CHECK(rec->state == JobState::dead);
  CHECK(rec->result == kFailure);
  const auto ttl = r.call({"TTL", done}).integer;
  CHECK(ttl > 50);
  CHECK(ttl <= 60);
  CHECK(events.take(r) == std::vector<std::string>{"r 6-" + field});
}

TEST_CASE("a failure for another attempt than the running one changes nothing", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  put_running(r, keys, 0, "00000000A", record_in(JobState::running, 2));
  const std::string jobs_before = job_buckets_dump(r, keys, 0);
  const std::string inflight_before = dump(r, keys.inflight(0));
  const std::string counts_before = dump(r, keys.counts(0));

  const int stale = GENERATE(1, 3);
  const bool retry = GENERATE(true, false);
  CHECK(integers(fail_job(r, keys, 0, "00000000A", stale, {.should_retry = retry})) ==
        std::vector<std::int64_t>{0});
  CHECK(job_buckets_dump(r, keys, 0) == jobs_before);
  CHECK(dump(r, keys.inflight(0)) == inflight_before);
  CHECK(dump(r, keys.counts(0)) == counts_before);
  CHECK_FALSE(exists(r, keys.scheduled(0)));
  CHECK_FALSE(exists(r, keys.dead(0)));
  CHECK_FALSE(exists(r, keys.stats(0)));
  CHECK(events.take(r).empty());
}

TEST_CASE("a failure for a job that is not running, or unknown, changes nothing", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const JobState state = GENERATE(JobState::queued, JobState::scheduled, JobState::dead);
  put_record(r, keys, 0, "00000000A", record_in(state, 1));
  const std::string before = job_buckets_dump(r, keys, 0);

  CHECK(integers(fail_job(r, keys, 0, "00000000A", 1)) == std::vector<std::int64_t>{0});
  CHECK(integers(fail_job(r, keys, 0, "00000000Z", 1)) == std::vector<std::int64_t>{0});
  CHECK(job_buckets_dump(r, keys, 0) == before);
  CHECK_FALSE(exists(r, keys.stats(0)));
}
