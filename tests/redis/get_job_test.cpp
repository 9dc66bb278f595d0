// getJob-2.lua: a job's record, live or finished; changes nothing.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::bindings::GetJob;
using jq::store::JobState;

namespace {

jq::redis::Reply get_job(SyncRedis& r, const jq::redis::Keys& keys, int shard,
                         const std::string& field) {
  jq::redis::Reply reply = r.eval(GetJob::call(GetJob::keys(keys, shard, field), {field}));
  REQUIRE(GetJob::decode(reply));
  return reply;
}

}  // namespace

TEST_CASE("getJob returns a queued job's record from the jobs hash and changes nothing",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string argument("\x92\x01\x00", 3);
  auto f = fields_of(push_jobs(r, keys, 1, {{.name = "resize", .argument = argument}}));
  const std::string jobs_before = job_buckets_dump(r, keys, 1);
  const auto ready_before = ready_queue(r, keys, 1, "resize");

  auto reply = get_job(r, keys, 1, f[0]);
  REQUIRE(reply.type == jq::redis::Reply::Type::string);
  CHECK(reply.str == raw_record(r, keys, 1, f[0]));
  auto rec = jq::store::decode_record(reply.str);
  REQUIRE(rec);
  CHECK(rec->name == "resize");
  CHECK(rec->argument == argument);
  CHECK(rec->state == JobState::queued);

  CHECK(job_buckets_dump(r, keys, 1) == jobs_before);
  CHECK(ready_queue(r, keys, 1, "resize") == ready_before);
}

TEST_CASE("getJob returns live records in every state they are kept in", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const JobState state =
      GENERATE(JobState::queued, JobState::scheduled, JobState::running, JobState::dead);
  auto stored = record_in(state, 2);
  stored.last_error = "timeout";
  put_record(r, keys, 0, "00000000A", stored);

  auto reply = get_job(r, keys, 0, "00000000A");
  REQUIRE(reply.type == jq::redis::Reply::Type::string);
  auto rec = jq::store::decode_record(reply.str);
  REQUIRE(rec);
  CHECK(rec->state == state);
  CHECK(rec->attempts == 2);
  CHECK(rec->last_error == "timeout");
}

TEST_CASE("getJob returns a finished job's record from its done key and leaves it there",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto finished = record_in(JobState::succeeded, 1);
  finished.keep_result = true;
  finished.result = std::string("\x81\xa2ok\xc3", 5);
  const std::string done = keys.done(0, "00000000B");
  r.call({"SET", done, pack_record(finished), "EX", "3600"});

  auto reply = get_job(r, keys, 0, "00000000B");
  REQUIRE(reply.type == jq::redis::Reply::Type::string);
  auto rec = jq::store::decode_record(reply.str);
  REQUIRE(rec);
  CHECK(rec->state == JobState::succeeded);
  CHECK(rec->result == finished.result);

  CHECK(exists(r, done));
  CHECK(r.call({"TTL", done}).integer > 0);
}

TEST_CASE("getJob of an unknown job is nil", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  push_jobs(r, keys, 0, {{}});  // another job of the shard

  CHECK(get_job(r, keys, 0, "00000000Z").is_nil());
  CHECK(get_job(r, keys, 1, "000000001").is_nil());
}
