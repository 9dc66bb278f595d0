// reserveJobs-9.lua: the best ready jobs of one name move to in-flight, bounded and counted.
#include <catch2/catch.hpp>

#include <limits>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
using jq::store::JobState;

namespace {

// The reply's (field, packed record) pairs.
std::vector<std::pair<std::string, std::string>> reserved(const Reply& reply) {
  REQUIRE(reply.is_array());
  REQUIRE(reply.elements.size() % 2 == 0);
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < reply.elements.size(); i += 2) {
    out.emplace_back(reply.elements[i].str, reply.elements[i + 1].str);
  }
  return out;
}

std::vector<std::string> reserved_fields(const Reply& reply) {
  std::vector<std::string> out;
  for (const auto& [field, record] : reserved(reply)) out.push_back(field);
  return out;
}

std::vector<std::string> ready_fields(SyncRedis& r, const jq::redis::Keys& keys, int shard,
                                      const std::string& name) {
  std::vector<std::string> out;
  for (const auto& [member, priority] : ready_queue(r, keys, shard, name)) {
    out.push_back(member.substr(9));
  }
  return out;
}

}  // namespace

TEST_CASE("reserveJobs takes jobs in ready order, up to the count asked for", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(
      push_jobs(r, keys, 0, {{.priority = 5}, {.priority = 1}, {.priority = 5}, {.priority = 3}}));

  auto reply = reserve_jobs(r, keys, 0, "email", 3);
  CHECK(reserved_fields(reply) == std::vector<std::string>{f[1], f[3], f[0]});
  CHECK(ready_fields(r, keys, 0, "email") == std::vector<std::string>{f[2]});
}

TEST_CASE("reserved jobs are running in attempt 1 with their deadline in inflight", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 1, {{.timeout_ms = 5000}, {.timeout_ms = 86400000}}));
  const std::string member0 = member_of(r, keys, 1, f[0]);

  auto jobs = reserved(reserve_jobs(r, keys, 1, "email", 10, kNowMs + 7));
  REQUIRE(jobs.size() == 2);
  for (const auto& [field, packed] : jobs) {
    INFO(field);
    CHECK(raw_record(r, keys, 1, field) == packed);
    auto rec = jq::store::decode_record(packed);
    REQUIRE(rec);
    CHECK(rec->state == JobState::running);
    CHECK(rec->attempts == 1);
  }
  CHECK(running_deadlines(r, keys.inflight(1)) ==
        std::vector<std::pair<std::string, std::int64_t>>{{f[0], kNowMs + 7 + 5000},
                                                          {f[1], kNowMs + 7 + 86400000}});
  // The ready member stays in the record: releaseJob puts the job back there.
  CHECK(member_of(r, keys, 1, f[0]) == member0);
  CHECK(ready_queue(r, keys, 1, "email").empty());
}

TEST_CASE("a reserved job's record keeps every value, whatever its argument's size and slots",
          "[redis]") {
  // reserveJobs loads a record without its argument and packs only the slots after it when
  // their number does not change: at every size of str header, with 13 slots and with more.
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  for (const std::size_t size : {0, 1, 31, 32, 255, 256, 65535, 65536}) {
    for (const bool unique : {false, true}) {
      INFO("argument bytes: " << size << ", unique key: " << unique);
      const PushArgs job{.argument = std::string(size, 'a'),
                         .priority = 4,
                         .max_retry = 6,
                         .keep_result = true,
                         .timeout_ms = 7000,
                         .unique_key = unique ? "u" + std::to_string(size) : "",
                         .unique_until_started = false};
      const std::string field = fields_of(push_jobs(r, keys, 3, {job}))[0];
      auto jobs = reserved(reserve_jobs(r, keys, 3, "email", 1));
      REQUIRE(jobs.size() == 1);
      CHECK(jobs[0].first == field);
      CHECK(raw_record(r, keys, 3, field) == jobs[0].second);
      auto rec = jq::store::decode_record(jobs[0].second);
      REQUIRE(rec);
      CHECK(rec->argument == job.argument);
      CHECK(rec->name == "email");
      CHECK(rec->priority == 4);
      CHECK(rec->max_retry == 6);
      CHECK(rec->keep_result);
      CHECK(rec->timeout_ms == 7000);
      CHECK(rec->state == JobState::running);
      CHECK(rec->attempts == 1);
      CHECK(rec->enqueued_at_ms == kNowMs);
      CHECK(rec->unique_key == job.unique_key);
      if (!unique) {
        jq::store::JobRecord want = *rec;
        CHECK(jobs[0].second == pack_record(want, rec->ready_stamp));
      }
    }
  }
}

TEST_CASE("a record stored with its trailing none slots is reserved whole, trimmed", "[redis]") {
  // Its slot count changes when it is packed again (pack_record leaves the none slots out), so
  // reserveJobs cannot keep the bytes it loaded: it cuts the argument out and packs it all.
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  jq::store::JobRecord rec = record_in(JobState::queued);
  rec.argument = std::string(300, 'z');
  std::string record = pack_record(rec, "0000000AA");
  // The same 13 slots under an array header of 21, then slots 14-21 with their none values
  // ('', 0, '', 0, '', false, false, 0).
  record = std::string("\xdc\x00\x15", 3) + record.substr(1) +
           std::string("\xa0\x00\xa0\x00\xa0\xc2\xc2\x00", 8);
  const RecordAt at = record_at(r, keys, 0, "00000000A");
  REQUIRE(r.call({"HSET", at.bucket, at.slot, record}).integer == 1);
  put_ready(r, keys, 0, "email", 0, "0000000AA00000000A");

  auto jobs = reserved(reserve_jobs(r, keys, 0, "email", 1));
  REQUIRE(jobs.size() == 1);
  jq::store::JobRecord want = rec;
  want.state = JobState::running;
  want.attempts = 1;
  want.result = "t";  // the reservation's token, while it runs
  CHECK(jobs[0].second == pack_record(want, "0000000AA"));
  CHECK(raw_record(r, keys, 0, "00000000A") == jobs[0].second);
}

TEST_CASE("reserveJobs counts the attempt on top of earlier ones", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_record(r, keys, 0, "00000000A", record_in(JobState::queued, 2), "0000000AA00000000A");
  put_ready(r, keys, 0, "email", 0, "0000000AA00000000A");

  auto jobs = reserved(reserve_jobs(r, keys, 0, "email", 1));
  REQUIRE(jobs.size() == 1);
  CHECK(jq::store::decode_record(jobs[0].second)->attempts == 3);
}

TEST_CASE(
    "reserveJobs moves jobs from the ready to the running count of their name, and counts "
    "dispatched jobs per shard",
    "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  push_jobs(r, keys, 0, {{}, {}, {}, {.name = "resize"}});

  reserve_jobs(r, keys, 0, "email", 2);
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"ready:email", "1"},
                                                                         {"ready:resize", "1"},
                                                                         {"running:email", "2"}});
  CHECK(hget(r, keys.stats(0), "dispatched") == "2");

  reserve_jobs(r, keys, 0, "email", 5);
  reserve_jobs(r, keys, 0, "resize", 5);
  CHECK(hgetall(r, keys.counts(0)) ==
        std::map<std::string, std::string>{{"running:email", "3"}, {"running:resize", "1"}});
  CHECK(hget(r, keys.stats(0), "dispatched") == "4");
}

TEST_CASE("reserveJobs on an empty queue takes nothing and counts nothing", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  push_jobs(r, keys, 0, {{.name = "resize"}});

  auto reply = reserve_jobs(r, keys, 0, "email", 5);
  REQUIRE(reply.is_array());
  CHECK(reply.elements.empty());
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"ready:resize", "1"}});
  CHECK_FALSE(hget(r, keys.stats(0), "dispatched"));
  CHECK(running_deadlines(r, keys.inflight(0)).empty());
}

TEST_CASE("reserveJobs answers the queue's head and how many jobs wait in it", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {{.priority = 4}, {.priority = -2}, {.priority = 9}}));
  push_jobs(r, keys, 0, {{.name = "resize"}});  // another name's jobs are not counted

  auto reply = reserve_jobs_reply(r, keys, 0, "email", 1);
  REQUIRE(reply.elements.size() == 5);
  CHECK(reply.elements[0].str == member_of(r, keys, 0, f[0]));  // -2 was taken; 4 is next
  CHECK(reply.elements[1].as_integer() == 4);
  CHECK(reply.elements[2].as_integer() == 2);  // 4 and 9, whatever the bound
  CHECK(reply.elements[3].str == f[1]);

  reply = reserve_jobs_reply(r, keys, 0, "email", 5);
  REQUIRE(reply.elements.size() == 7);
  CHECK(reply.elements[0].str.empty());  // nothing left
  CHECK(reply.elements[1].str.empty());
  CHECK(reply.elements[2].as_integer() == 0);

  // Nothing taken (nothing before the bound): the head as it is.
  push_jobs(r, keys, 0, {{.priority = 7}, {.priority = 7}, {.priority = 8}});
  reply = reserve_jobs_reply(r, keys, 0, "email", 5, kNowMs, "1", "");
  REQUIRE(reply.elements.size() == 3);
  CHECK(reply.elements[1].as_integer() == 7);
  CHECK(reply.elements[2].as_integer() == 3);
}

TEST_CASE("reserveJobs with a count of 0 takes nothing and answers the head", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {{.priority = 4}, {.priority = -2}}));

  auto reply = reserve_jobs_reply(r, keys, 0, "email", 0);
  REQUIRE(reply.elements.size() == 3);
  CHECK(reply.elements[0].str == member_of(r, keys, 0, f[1]));
  CHECK(reply.elements[1].as_integer() == -2);
  CHECK(ready_fields(r, keys, 0, "email") == std::vector<std::string>{f[1], f[0]});
}

TEST_CASE("the head answered skips cancelled jobs' members and drops them", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {{.priority = 1}, {.priority = 1}, {.priority = 2}}));
  // f[1] and f[2] cancelled (their records deleted, as cancelJob does); f[0] is taken.
  for (int i : {1, 2}) {
    const RecordAt at = record_at(r, keys, 0, f[i]);
    r.call({"HDEL", at.bucket, at.slot});
  }

  auto reply = reserve_jobs_reply(r, keys, 0, "email", 1);
  REQUIRE(reply.elements.size() == 5);
  CHECK(reply.elements[3].str == f[0]);
  CHECK(reply.elements[0].str.empty());  // nothing live is left
  CHECK(ready_queue(r, keys, 0, "email").empty());
}

TEST_CASE("reserveJobs takes only jobs with a smaller priority than the bound's", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(
      push_jobs(r, keys, 0, {{.priority = -3}, {.priority = 2}, {.priority = 3}, {.priority = 4}}));

  // The bound's member sorts before every member here: only the priority decides.
  auto reply = reserve_jobs(r, keys, 0, "email", 10, kNowMs, "3", "000000000000000000");
  CHECK(reserved_fields(reply) == std::vector<std::string>{f[0], f[1]});
  CHECK(ready_fields(r, keys, 0, "email") == std::vector<std::string>{f[2], f[3]});
}

TEST_CASE("among equal priorities the bound's member decides, and the bound is not taken",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {{.priority = 7}, {.priority = 7}, {.priority = 7}}));
  const std::string bound = member_of(r, keys, 0, f[1]);

  SECTION("jobs before the bound's member are taken, the bound and later ones are not") {
    auto reply = reserve_jobs(r, keys, 0, "email", 10, kNowMs, "7", bound);
    CHECK(reserved_fields(reply) == std::vector<std::string>{f[0]});
    CHECK(ready_fields(r, keys, 0, "email") == std::vector<std::string>{f[1], f[2]});
  }
  SECTION("a bound that is the head takes nothing") {
    auto reply = reserve_jobs(r, keys, 0, "email", 10, kNowMs, "7", member_of(r, keys, 0, f[0]));
    CHECK(reserved_fields(reply).empty());
    CHECK(ready_fields(r, keys, 0, "email").size() == 3);
  }
}

TEST_CASE("the bound's member compares in byte order, as the zset sorts ('Z' before 'a')",
          "[redis]") {
  // Lua's own string '<' follows the server's locale, in which 'a' may sort before 'Z'.
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_record(r, keys, 0, "00000000A", record_in(JobState::queued), "Z0000000000000000A");
  put_record(r, keys, 0, "00000000B", record_in(JobState::queued), "a0000000000000000B");
  put_ready(r, keys, 0, "email", 7, "Z0000000000000000A");
  put_ready(r, keys, 0, "email", 7, "a0000000000000000B");

  CHECK(reserved_fields(reserve_jobs(r, keys, 0, "email", 10, kNowMs, "7", "a")) ==
        std::vector<std::string>{"00000000A"});
  CHECK(reserved_fields(reserve_jobs(r, keys, 0, "email", 10, kNowMs, "7", "Z")).empty());
  CHECK(reserved_fields(reserve_jobs(r, keys, 0, "email", 10, kNowMs, "7", "b")) ==
        std::vector<std::string>{"00000000B"});
}

TEST_CASE("a bound and a count together: whichever stops first", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {{.priority = 1}, {.priority = 1}, {.priority = 1}}));

  CHECK(reserved_fields(reserve_jobs(r, keys, 0, "email", 2, kNowMs, "2", "")) ==
        std::vector<std::string>{f[0], f[1]});
  CHECK(reserved_fields(reserve_jobs(r, keys, 0, "email", 2, kNowMs,
                                     std::to_string(std::numeric_limits<std::int32_t>::min()), ""))
            .empty());
  CHECK(ready_fields(r, keys, 0, "email") == std::vector<std::string>{f[2]});
}

TEST_CASE("a ready member without a queued record is dropped and the next job is taken",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  // 00000000A: no record; 00000000B: running (should not be ready); 00000000C: queued.
  put_record(r, keys, 0, "00000000B", record_in(JobState::running, 1), "00000000100000000B");
  put_record(r, keys, 0, "00000000C", record_in(JobState::queued), "00000000200000000C");
  for (const char* member : {"00000000000000000A", "00000000100000000B", "00000000200000000C"}) {
    put_ready(r, keys, 0, "email", 0, member);
  }
  const std::string running_before = *raw_record(r, keys, 0, "00000000B");

  auto reply = reserve_jobs(r, keys, 0, "email", 1);
  CHECK(reserved_fields(reply) == std::vector<std::string>{"00000000C"});
  CHECK(ready_queue(r, keys, 0, "email").empty());
  CHECK(raw_record(r, keys, 0, "00000000B") == running_before);
  CHECK(running_deadlines(r, keys.inflight(0)).size() == 1);
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"running:email", "1"}});
  CHECK(hget(r, keys.stats(0), "dispatched") == "1");
}

TEST_CASE("a job whose member is in its list twice is taken once", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_record(r, keys, 0, "00000000A", record_in(JobState::queued), "00000000000000000A");
  put_ready(r, keys, 0, "email", 0, "00000000000000000A");
  put_ready(r, keys, 0, "email", 0, "00000000000000000A");

  auto reply = reserve_jobs(r, keys, 0, "email", 5);
  CHECK(reserved_fields(reply) == std::vector<std::string>{"00000000A"});
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"running:email", "1"}});
  CHECK(ready_queue(r, keys, 0, "email").empty());
}

TEST_CASE("a reservation across record buckets stores every record and deadline", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, std::vector<PushArgs>(130)));
  REQUIRE(job_buckets(r, keys, 0).size() == 3);  // fields 1..130: 61 + 62 + 7

  auto jobs = reserved(reserve_jobs(r, keys, 0, "email", 130));
  REQUIRE(jobs.size() == 130);
  for (const auto& [field, packed] : jobs) CHECK(raw_record(r, keys, 0, field) == packed);
  CHECK(running_deadlines(r, keys.inflight(0)).size() == 130);
}
