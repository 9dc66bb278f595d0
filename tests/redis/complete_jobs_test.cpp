// completeJobs-13.lua: a success ends the job, keeping the result when asked; stale answers are
// ignored; a batch is each of its jobs on its own.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
using jq::redis::bindings::CompleteJobs;
using jq::store::JobState;

namespace {

// {type: "success", result: <bin 00 ff>}: binary, with a NUL inside.
const std::string kResult("\x82\xa4type\xa7success\xa6result\xc4\x02\x00\xff", 25);

struct Success {
  std::string field;
  int attempt = 1;
  std::optional<std::int64_t> handed{};  // the caller's polls take it; this many counted
};

// completeJobs for a batch: one integer per job.
std::vector<std::int64_t> complete_jobs(SyncRedis& r, const jq::redis::Keys& keys, int shard,
                                        const std::vector<Success>& batch,
                                        std::int64_t result_ttl_s = 3600) {
  CompleteJobs::Args args{result_ttl_s, keys.events_channel(shard), shard, kNowMs, {}};
  for (const Success& s : batch) args.jobs.push_back({s.field, s.attempt, kResult, s.handed});
  auto reply = r.eval(CompleteJobs::call(CompleteJobs::keys(keys, shard), std::move(args)));
  REQUIRE(CompleteJobs::decode(reply, batch.size()));
  return integers(reply);
}

// A batch of one, as the integer answered for it.
Reply complete_job(SyncRedis& r, const jq::redis::Keys& keys, int shard, const std::string& field,
                   int attempt, std::int64_t result_ttl_s = 3600) {
  auto out = complete_jobs(r, keys, shard, {{field, attempt}}, result_ttl_s);
  REQUIRE(out.size() == 1);
  Reply reply;
  reply.type = Reply::Type::integer;
  reply.integer = out[0];
  return reply;
}

// A pusher waits for the job's result (fetchResult with a watch, as the result long poll does).
void watch(SyncRedis& r, const jq::redis::Keys& keys, int shard, const std::string& field) {
  jq::redis::bindings::FetchResult::Args args{field, 30000};
  r.eval(jq::redis::bindings::FetchResult::call(
      jq::redis::bindings::FetchResult::keys(keys, shard, field), std::move(args)));
  REQUIRE(exists(r, keys.watch(shard, field)));
}

}  // namespace

TEST_CASE("a success without keep_result removes the job and keeps nothing", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  const std::string field = push_and_reserve(r, keys, 0);
  const std::string other = push_and_reserve(r, keys, 0);
  events.take(r);

  auto reply = complete_job(r, keys, 0, field, 1);
  REQUIRE(reply.is_integer());
  CHECK(reply.integer == 1);

  CHECK_FALSE(raw_record(r, keys, 0, field));
  CHECK_FALSE(exists(r, keys.done(0, field)));
  CHECK(running_deadlines(r, keys.inflight(0)) ==
        std::vector<std::pair<std::string, std::int64_t>>{{other, kNowMs + 30000}});
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"running:email", "1"}});
  CHECK(hget(r, keys.stats(0), "succeeded") == "1");
  CHECK(events.take(r).empty());
}

TEST_CASE("the last running job of a name leaves no running count behind", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string field = push_and_reserve(r, keys, 0);

  REQUIRE(complete_job(r, keys, 0, field, 1).integer == 1);
  CHECK_FALSE(exists(r, keys.counts(0)));
}

TEST_CASE(
    "a success with keep_result stores the result for result_ttl and announces it to "
    "a watcher",
    "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  const std::string field = push_and_reserve(r, keys, 4, {.keep_result = true});
  watch(r, keys, 4, field);
  events.take(r);

  REQUIRE(complete_job(r, keys, 4, field, 1, 120).integer == 1);

  CHECK_FALSE(raw_record(r, keys, 4, field));
  const std::string done = keys.done(4, field);
  auto raw = r.call({"GET", done});
  REQUIRE(raw.is_string());
  auto rec = jq::store::decode_record(raw.str);
  REQUIRE(rec);
  CHECK(rec->state == JobState::succeeded);
  CHECK(rec->result == kResult);
  CHECK(rec->attempts == 1);
  CHECK(rec->name == "email");
  const auto ttl = r.call({"TTL", done}).integer;
  CHECK(ttl > 110);
  CHECK(ttl <= 120);
  CHECK(events.take(r) == std::vector<std::string>{"r 4-" + field});
  CHECK_FALSE(exists(r, keys.watch(4, field)));
  CHECK(hget(r, keys.stats(4), "succeeded") == "1");
  CHECK_FALSE(exists(r, keys.counts(4)));
}

TEST_CASE("a kept result's record holds the job's argument, whatever its size and slots",
          "[redis]") {
  // completeJobs reads a record without its argument and reads the argument only to store a
  // kept result: at every size of MessagePack str header, with 13 slots and with more.
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  for (const std::size_t size : {0, 1, 31, 32, 255, 256, 65535, 65536}) {
    for (const std::string unique_key : {"", "u"}) {
      INFO("argument bytes: " << size << ", unique key: '" << unique_key << "'");
      const std::string argument(size, 'a');
      const std::string field = push_and_reserve(
          r, keys, 2,
          {.argument = argument,
           .keep_result = true,
           .unique_key = unique_key.empty() ? "" : unique_key + std::to_string(size)});
      REQUIRE(complete_job(r, keys, 2, field, 1).integer == 1);
      auto raw = r.call({"GET", keys.done(2, field)});
      REQUIRE(raw.is_string());
      auto rec = jq::store::decode_record(raw.str);
      REQUIRE(rec);
      CHECK(rec->argument == argument);
      CHECK(rec->state == JobState::succeeded);
      CHECK(rec->result == kResult);
      CHECK(rec->name == "email");
      CHECK(rec->max_retry == 3);
      CHECK(rec->timeout_ms == 30000);
    }
  }
}

TEST_CASE("a kept result nobody watches is stored without an announcement", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  const std::string field = push_and_reserve(r, keys, 1, {.keep_result = true});
  events.take(r);

  REQUIRE(complete_job(r, keys, 1, field, 1).integer == 1);
  CHECK(exists(r, keys.done(1, field)));
  CHECK(events.take(r).empty());
}

TEST_CASE("a kept result handed to the caller's poll is not stored, and other polls hear of it",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  const std::string alone = push_and_reserve(r, keys, 3, {.keep_result = true});
  const std::string shared = push_and_reserve(r, keys, 3, {.keep_result = true});
  const std::string early = push_and_reserve(r, keys, 3, {.keep_result = true});
  const std::string unkept = push_and_reserve(r, keys, 3);
  watch(r, keys, 3, alone);   // only the caller's poll
  watch(r, keys, 3, shared);  // the caller's poll and one elsewhere
  watch(r, keys, 3, shared);
  watch(r, keys, 3, early);  // one elsewhere; the caller's has not counted itself yet
  events.take(r);

  CHECK(complete_jobs(r, keys, 3, {{alone, 1, 1}, {shared, 1, 1}, {early, 1, 0}, {unkept, 1, 1}}) ==
        std::vector<std::int64_t>{2, 2, 2, 1});
  for (const auto& f : {alone, shared, early, unkept}) {
    CHECK_FALSE(raw_record(r, keys, 3, f));
    CHECK_FALSE(exists(r, keys.done(3, f)));
    CHECK_FALSE(exists(r, keys.watch(3, f)));
  }
  CHECK(events.take(r) == std::vector<std::string>{"r 3-" + shared, "r 3-" + early});
  CHECK(hget(r, keys.stats(3), "succeeded") == "4");
}

TEST_CASE("a success for another attempt than the running one changes nothing", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  put_running(r, keys, 0, "00000000A", record_in(JobState::running, 2));
  const std::string jobs_before = job_buckets_dump(r, keys, 0);
  const std::string inflight_before = dump(r, keys.inflight(0));
  const std::string counts_before = dump(r, keys.counts(0));

  const int stale = GENERATE(1, 3);
  auto reply = complete_job(r, keys, 0, "00000000A", stale);
  REQUIRE(reply.is_integer());
  CHECK(reply.integer == 0);
  CHECK(job_buckets_dump(r, keys, 0) == jobs_before);
  CHECK(dump(r, keys.inflight(0)) == inflight_before);
  CHECK(dump(r, keys.counts(0)) == counts_before);
  CHECK_FALSE(exists(r, keys.stats(0)));
  CHECK_FALSE(exists(r, keys.done(0, "00000000A")));
  CHECK(events.take(r).empty());
}

TEST_CASE("a success for a job that is not running changes nothing", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const JobState state = GENERATE(JobState::queued, JobState::scheduled, JobState::dead);
  put_record(r, keys, 0, "00000000A", record_in(state, 1));
  const std::string before = job_buckets_dump(r, keys, 0);

  CHECK(complete_job(r, keys, 0, "00000000A", 1).integer == 0);
  CHECK(job_buckets_dump(r, keys, 0) == before);
  CHECK_FALSE(exists(r, keys.stats(0)));
  CHECK_FALSE(exists(r, keys.done(0, "00000000A")));
}

TEST_CASE("a success for an unknown or finished job changes nothing", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string field = push_and_reserve(r, keys, 0);
  REQUIRE(complete_job(r, keys, 0, field, 1).integer == 1);

  CHECK(complete_job(r, keys, 0, field, 1).integer == 0);
  CHECK(complete_job(r, keys, 0, "00000000Z", 1).integer == 0);
  CHECK(hget(r, keys.stats(0), "succeeded") == "1");
}

TEST_CASE("a batch finishes each running job and skips each stale one", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  const std::string a = push_and_reserve(r, keys, 2);
  const std::string kept = push_and_reserve(r, keys, 2, {.name = "resize", .keep_result = true});
  const std::string c = push_and_reserve(r, keys, 2);
  watch(r, keys, 2, kept);
  events.take(r);

  CHECK(complete_jobs(r, keys, 2, {{a, 1}, {c, 2}, {kept, 1}, {"00000000Z", 1}, {a, 1}}) ==
        std::vector<std::int64_t>{1, 0, 1, 0, 0});
  CHECK_FALSE(raw_record(r, keys, 2, a));
  CHECK_FALSE(raw_record(r, keys, 2, kept));
  CHECK(raw_record(r, keys, 2, c));  // its attempt is 1, not 2: still running
  CHECK(exists(r, keys.done(2, kept)));
  CHECK_FALSE(exists(r, keys.done(2, a)));
  CHECK(running_deadlines(r, keys.inflight(2)) ==
        std::vector<std::pair<std::string, std::int64_t>>{{c, kNowMs + 30000}});
  CHECK(hgetall(r, keys.counts(2)) == std::map<std::string, std::string>{{"running:email", "1"}});
  CHECK(hget(r, keys.stats(2), "succeeded") == "2");
  CHECK(events.take(r) == std::vector<std::string>{"r 2-" + kept});
}

TEST_CASE("a job answered twice in one batch ends once", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string field = push_and_reserve(r, keys, 0);
  const std::string other = push_and_reserve(r, keys, 0);

  CHECK(complete_jobs(r, keys, 0, {{field, 1}, {field, 1}, {other, 1}}) ==
        std::vector<std::int64_t>{1, 0, 1});
  CHECK(hget(r, keys.stats(0), "succeeded") == "2");
  CHECK_FALSE(exists(r, keys.counts(0)));
  CHECK(running_deadlines(r, keys.inflight(0)).empty());
}

TEST_CASE("a batch spanning record buckets ends every job", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  // 70 jobs: fields 1..70 lie in two buckets (62 fields each).
  push_jobs(r, keys, 0, std::vector<PushArgs>(70));
  auto taken = reserve_jobs(r, keys, 0, "email", 70);
  REQUIRE(taken.elements.size() == 140);
  std::vector<Success> batch;
  for (std::size_t i = 0; i < taken.elements.size(); i += 2)
    batch.push_back({taken.elements[i].str});

  CHECK(complete_jobs(r, keys, 0, batch) == std::vector<std::int64_t>(70, 1));
  CHECK(record_count(r, keys, 0) == 0);
  CHECK(job_buckets(r, keys, 0).empty());
  CHECK(running_deadlines(r, keys.inflight(0)).empty());
}
