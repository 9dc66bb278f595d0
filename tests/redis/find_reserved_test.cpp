// findReserved-2.lua: the running jobs of one reservation, found by its token.
#include <catch2/catch.hpp>

#include <set>

#include "src/redis/bindings/find_reserved.hpp"
#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::bindings::FindReserved;
using jq::redis::bindings::ReleaseJob;

namespace {

FindReserved::Page find_page(SyncRedis& r, const jq::redis::Keys& keys,
                             std::vector<std::string> tokens, const std::string& cursor = "0",
                             std::int64_t count = 500) {
  auto page = FindReserved::decode(r.eval(
      FindReserved::call(FindReserved::keys(keys, 0), {kNowMs, cursor, count, std::move(tokens)})));
  REQUIRE(page);
  return std::move(*page);
}

// Every page, `count` members at a time.
std::set<std::string> find_all(SyncRedis& r, const jq::redis::Keys& keys,
                               const std::vector<std::string>& tokens, std::int64_t count = 500) {
  std::set<std::string> fields;
  std::string cursor = "0";
  do {
    FindReserved::Page page = find_page(r, keys, tokens, cursor, count);
    for (const auto& job : page.jobs) {
      CHECK(read_record(r, keys, 0, job.field)->state == jq::store::JobState::running);
      fields.insert(job.field);
    }
    cursor = page.cursor;
  } while (cursor != "0");
  return fields;
}

std::set<std::string> taken(const jq::redis::Reply& reply) {
  std::set<std::string> fields;
  for (std::size_t i = 0; i < reply.elements.size(); i += 2) fields.insert(reply.elements[i].str);
  return fields;
}

}  // namespace

TEST_CASE("findReserved finds the jobs of one reservation by its token, while they run",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {{}, {}, {}, {}, {}}));
  const auto a = taken(reserve_jobs(r, keys, 0, "email", 2, kNowMs, "", "", "tokenA"));
  const auto b = taken(reserve_jobs(r, keys, 0, "email", 2, kNowMs, "", "", "tokenB"));
  REQUIRE(a == std::set<std::string>{f[0], f[1]});
  REQUIRE(b == std::set<std::string>{f[2], f[3]});

  const FindReserved::Page page = find_page(r, keys, {"tokenA"});
  CHECK(page.cursor == "0");
  REQUIRE(page.jobs.size() == 2);
  CHECK(read_record(r, keys, 0, page.jobs[0].field)->attempts == 1);
  CHECK(find_all(r, keys, {"tokenB"}) == b);
  CHECK(find_all(r, keys, {"tokenC"}).empty());
  std::set<std::string> both = a;
  both.insert(b.begin(), b.end());
  CHECK(find_all(r, keys, {"tokenC", "tokenA", "tokenB"}) == both);

  // Given back, a job is no longer the reservation's (and its record is as before it).
  auto released = ReleaseJob::decode(r.eval(ReleaseJob::call(
      ReleaseJob::keys(keys, 0, "email"), {f[0], 1, keys.events_channel(0), 0, "tokenA"})));
  REQUIRE(released);
  CHECK(*released == ReleaseJob::Status::released);
  CHECK(find_all(r, keys, {"tokenA"}) == std::set<std::string>{f[1]});
  CHECK(read_record(r, keys, 0, f[0])->result.empty());
  // Taken again by another reservation: that one's.
  CHECK(taken(reserve_jobs(r, keys, 0, "email", 1, kNowMs, "", "", "tokenD")) ==
        std::set<std::string>{f[0]});
  CHECK(find_all(r, keys, {"tokenD"}) == std::set<std::string>{f[0]});
  CHECK(find_all(r, keys, {"tokenA"}) == std::set<std::string>{f[1]});
}

// A push that takes jobs at once (pushJobs' take) is a reservation too: the jobs it took carry
// its token, those it queued do not.
TEST_CASE("findReserved finds the jobs a push took at once by the push's token", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto reply = push_jobs(r, keys, 0, {{.name = "a"}, {.name = "a"}, {.name = "b"}}, kNowMs,
                         kStampUs, "", kMaxListBytes, "101", "pushT");
  const auto f = fields_of(reply);
  REQUIRE(jq::redis::bindings::PushJobs::decode(reply, 3)->taken.size() == 2);
  CHECK(find_all(r, keys, {"pushT"}) == std::set<std::string>{f[0], f[2]});
  // Given back with that token, the job waits in its queue and is no longer the push's.
  auto released = ReleaseJob::decode(r.eval(ReleaseJob::call(
      ReleaseJob::keys(keys, 0, "a"), {f[0], 1, keys.events_channel(0), 0, "pushT"})));
  REQUIRE(released);
  CHECK(*released == ReleaseJob::Status::released);
  CHECK(find_all(r, keys, {"pushT"}) == std::set<std::string>{f[2]});
  CHECK(read_record(r, keys, 0, f[0])->state == jq::store::JobState::queued);
  CHECK(read_record(r, keys, 0, f[0])->attempts == 0);
}

// A plain job's record stays within hash-max-listpack-value (64 bytes by default) while it runs
// with the longest token a master makes in practice (four bytes, then a count below 2^32), so
// its bucket stays a listpack (docs/REDIS.md).
TEST_CASE("a running record with its reservation's token stays within 64 bytes", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  PushArgs job;
  job.argument = "\xb0" + std::string(16, 'a');  // a 16-byte string
  const std::string field = fields_of(push_jobs(r, keys, 0, {job}))[0];
  const std::size_t queued = raw_record(r, keys, 0, field)->size();
  const std::string token("\x01\x02\x03\x04\xff\xff\xff\xff", 8);
  REQUIRE(reserve_jobs(r, keys, 0, "email", 1, kNowMs, "", "", token).elements.size() == 2);
  const std::size_t running = raw_record(r, keys, 0, field)->size();
  CHECK(running == queued + token.size());
  CHECK(running <= 64);
  CHECK(find_all(r, keys, {token}) == std::set<std::string>{field});
}

// The inflight zset is kept a skiplist (its member at +inf), which ZSCAN answers in pages.
TEST_CASE("findReserved pages through many running jobs and finds each of its reservation's",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  REQUIRE(fields_of(push_jobs(r, keys, 0, std::vector<PushArgs>(300))).size() == 300);
  const auto a = taken(reserve_jobs(r, keys, 0, "email", 150, kNowMs, "", "", "tokenA"));
  const auto b = taken(reserve_jobs(r, keys, 0, "email", 150, kNowMs, "", "", "tokenB"));
  REQUIRE(a.size() == 150);
  REQUIRE(b.size() == 150);
  CHECK(find_page(r, keys, {"tokenA"}, "0", 10).cursor != "0");
  CHECK(find_all(r, keys, {"tokenA"}, 10) == a);
  CHECK(find_all(r, keys, {"tokenB"}, 25) == b);
}
