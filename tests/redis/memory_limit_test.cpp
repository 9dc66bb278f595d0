// The scripts against a Redis over its maxmemory (noeviction): Redis refuses the scripts that
// declare no allow-oom before their first line runs, so nothing is half-written, and runs the
// others, so the jobs already stored still finish.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
using jq::redis::Script;
using jq::redis::bindings::CompleteJobs;
using jq::redis::bindings::FetchResult;
using jq::redis::bindings::PushJobs;

namespace {

bool refused_for_memory(const Reply& reply) {
  return reply.is_error() && reply.str.starts_with("OOM");
}

// Whatever Redis holds is above one byte.
void exhaust_memory(SyncRedis& r) {
  REQUIRE(r.call({"CONFIG", "SET", "maxmemory", "1"}).str == "OK");
}

}  // namespace

TEST_CASE("over maxmemory Redis refuses exactly the scripts that declare it, before they write",
          "[redis]") {
  RedisServer redis;
  SyncRedis r(redis.port());
  REQUIRE(r.call({"FUNCTION", "LOAD", std::string(jq::redis::library_source())}).str ==
          jq::redis::library_name());
  exhaust_memory(r);
  // Any keys and no arguments: a script that runs may fail on them, but not for memory.
  auto call = [&](const Script& s) {
    std::vector<std::string> args{"FCALL", s.function, std::to_string(s.num_keys)};
    for (std::size_t i = 1; i <= s.num_keys; ++i) args.push_back("{oom}:" + std::to_string(i));
    return r.call(args);
  };
  int refused = 0;
  for (const Script& s : jq::redis::all_scripts()) {
    if (!s.source.starts_with("#!lua\n")) continue;
    INFO(s.file);
    CHECK(refused_for_memory(call(s)));
    ++refused;
  }
  // pushJobs, reclassifyJobs, the three constraint changes, and saveSchedule, leaveSchedule and
  // fireSchedule
  CHECK(refused == 8);
  CHECK(r.call({"DBSIZE"}).integer == 0);
  for (const Script& s : jq::redis::all_scripts()) {
    if (s.source.starts_with("#!lua\n")) continue;
    const Reply reply = call(s);
    INFO(s.file << ": " << reply.str);
    CHECK_FALSE(refused_for_memory(reply));
  }
}

TEST_CASE("over maxmemory a push changes nothing while running jobs still complete", "[redis]") {
  RedisServer redis;
  SyncRedis r(redis.port());
  const jq::redis::Keys keys("m");
  PushArgs kept;
  kept.keep_result = true;
  const std::string plain = push_and_reserve(r, keys, 0);
  const std::string with_result = push_and_reserve(r, keys, 0, kept);
  const std::string buckets = job_buckets_dump(r, keys, 0);
  const auto stats = hgetall(r, keys.stats(0));
  exhaust_memory(r);

  PushJobs::Args args{kNowMs, kStampUs, keys.events_channel(0), "", 0, kMaxListBytes, "", {}, {}};
  args.jobs.push_back({"email", "\xc0", 0, 3, false, 30000, 0, "", false, 1000, "", ""});
  CHECK(refused_for_memory(r.eval(PushJobs::call(PushJobs::keys(keys, 0), std::move(args)))));
  CHECK(job_buckets_dump(r, keys, 0) == buckets);
  CHECK(hgetall(r, keys.stats(0)) == stats);

  CompleteJobs::Args done{3600, keys.events_channel(0), 0, kNowMs, {}};
  done.jobs.push_back({plain, 1, "\x81\xa4type\xa7success"});
  done.jobs.push_back({with_result, 1, "\x81\xa4type\xa7success"});
  const Reply completed = r.eval(CompleteJobs::call(CompleteJobs::keys(keys, 0), std::move(done)));
  CHECK(integers(completed) == std::vector<std::int64_t>{1, 1});
  const Reply fetched =
      r.eval(FetchResult::call(FetchResult::keys(keys, 0, with_result), {with_result}));
  auto result = FetchResult::decode(fetched);
  REQUIRE(result);
  CHECK(result->status == FetchResult::Status::result);
  CHECK(result->result == "\x81\xa4type\xa7success");
}
