// promoteJobs-4.lua: due retries become ready, stamped with their due time.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
using jq::redis::bindings::PromoteJobs;
using jq::store::JobState;

namespace {

std::vector<std::int64_t> promote_jobs(SyncRedis& r, const jq::redis::Keys& keys, int shard,
                                       std::int64_t now_ms, int limit = 100) {
  Reply reply = r.eval(PromoteJobs::call(PromoteJobs::keys(keys, shard),
                                         {now_ms, limit, keys.events_channel(shard), shard}));
  REQUIRE(PromoteJobs::decode(reply));
  REQUIRE(reply.is_array());
  REQUIRE(reply.elements.size() == 2);
  return {reply.elements[0].integer, reply.elements[1].integer};
}

// A job waiting for its retry, due at `due_ms`, counted as scheduled.
void put_scheduled(SyncRedis& r, const jq::redis::Keys& keys, const std::string& field,
                   std::int64_t due_ms, const std::string& name = "email", int priority = 0) {
  auto rec = record_in(JobState::scheduled, 1);
  rec.name = name;
  rec.priority = priority;
  put_record(r, keys, 0, field, rec, "000000000" + field);
  r.call({"ZADD", keys.scheduled(0), std::to_string(due_ms), field});
  r.call({"HINCRBY", keys.counts(0), "scheduled:" + name, "1"});
}

}  // namespace

TEST_CASE("promoteJobs makes due jobs ready and reports the next due time", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_scheduled(r, keys, "00000000A", kNowMs - 500, "email", 4);
  put_scheduled(r, keys, "00000000B", kNowMs, "email", 4);
  put_scheduled(r, keys, "00000000C", kNowMs + 1);

  CHECK(promote_jobs(r, keys, 0, kNowMs) == std::vector<std::int64_t>{2, kNowMs + 1});

  for (const auto& [field, due] : {std::pair{std::string("00000000A"), kNowMs - 500},
                                   std::pair{std::string("00000000B"), kNowMs}}) {
    INFO(field);
    auto rec = read_record(r, keys, 0, field);
    REQUIRE(rec);
    CHECK(rec->state == JobState::queued);
    CHECK(rec->attempts == 1);
    const std::string member = base62(due * 1000, 9) + field;
    CHECK(member_of(r, keys, 0, field) == member);
    CHECK(ready_priority(r, keys, 0, "email", member) == 4);
  }
  CHECK(read_record(r, keys, 0, "00000000C")->state == JobState::scheduled);
  CHECK(zrange(r, keys.scheduled(0)) ==
        std::vector<std::pair<std::string, std::int64_t>>{{"00000000C", kNowMs + 1}});
  CHECK(hgetall(r, keys.counts(0)) ==
        std::map<std::string, std::string>{{"ready:email", "2"}, {"scheduled:email", "1"}});
}

TEST_CASE("with nothing left scheduled the next due time is -1", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  CHECK(promote_jobs(r, keys, 0, kNowMs) == std::vector<std::int64_t>{0, -1});

  put_scheduled(r, keys, "00000000A", kNowMs);
  CHECK(promote_jobs(r, keys, 0, kNowMs) == std::vector<std::int64_t>{1, -1});
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"ready:email", "1"}});
}

TEST_CASE("promoteJobs promotes at most the limit, earliest due first", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_scheduled(r, keys, "00000000A", kNowMs - 10);
  put_scheduled(r, keys, "00000000B", kNowMs - 30);
  put_scheduled(r, keys, "00000000C", kNowMs - 20);

  CHECK(promote_jobs(r, keys, 0, kNowMs, 2) == std::vector<std::int64_t>{2, kNowMs - 10});
  CHECK(read_record(r, keys, 0, "00000000A")->state == JobState::scheduled);
  CHECK(hgetall(r, keys.counts(0)) ==
        std::map<std::string, std::string>{{"ready:email", "2"}, {"scheduled:email", "1"}});
}

TEST_CASE("promoted jobs join their list behind the jobs already ready, earliest due first",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  // Pushed at kStampUs (µs); one retry became due a second before, one a second after, both
  // promoted after the push.
  auto pushed = fields_of(push_jobs(r, keys, 0, {{}}));
  put_scheduled(r, keys, "00000000a", kNowMs - 1000);
  put_scheduled(r, keys, "00000000b", kNowMs + 1000);

  promote_jobs(r, keys, 0, kNowMs + 1000);
  std::vector<std::string> order;
  for (const auto& [member, score] : ready_queue(r, keys, 0, "email")) {
    order.push_back(member.substr(9));
  }
  CHECK(order == std::vector<std::string>{pushed[0], "00000000a", "00000000b"});
}

TEST_CASE("promoteJobs announces each promoted name once, with its best job", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  put_scheduled(r, keys, "00000000A", kNowMs - 3, "email", 4);
  put_scheduled(r, keys, "00000000B", kNowMs - 2, "resize");
  put_scheduled(r, keys, "00000000C", kNowMs - 1, "email", 1);
  put_scheduled(r, keys, "00000000E", kNowMs, "email", 1);
  put_scheduled(r, keys, "00000000D", kNowMs + 5, "later");

  promote_jobs(r, keys, 0, kNowMs);
  // Each name with its best promoted job: the smallest priority, then the earliest due.
  CHECK(events.take(r) ==
        std::vector<std::string>{"p email 0 1 " + member_of(r, keys, 0, "00000000C"),
                                 "p resize 0 0 " + member_of(r, keys, 0, "00000000B")});
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"ready:email", "3"},
                                                                         {"ready:resize", "1"},
                                                                         {"scheduled:later", "1"}});

  promote_jobs(r, keys, 0, kNowMs);
  CHECK(events.take(r).empty());
}

TEST_CASE("a scheduled field without a scheduled record is dropped, not promoted", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_record(r, keys, 0, "00000000B", record_in(JobState::running, 1));
  const std::string running_before = *raw_record(r, keys, 0, "00000000B");
  r.call({"ZADD", keys.scheduled(0), std::to_string(kNowMs), "00000000A", std::to_string(kNowMs),
          "00000000B"});

  CHECK(promote_jobs(r, keys, 0, kNowMs) == std::vector<std::int64_t>{0, -1});
  CHECK_FALSE(exists(r, keys.scheduled(0)));
  CHECK(raw_record(r, keys, 0, "00000000B") == running_before);
  CHECK(ready_queue(r, keys, 0, "email").empty());
}

namespace {

// How many times Redis ran `command` (INFO commandstats), scripts' calls included.
std::int64_t command_calls(SyncRedis& r, const std::string& command) {
  const std::string info = r.call({"INFO", "commandstats"}).str;
  const std::string tag = "cmdstat_" + command + ":calls=";
  const auto at = info.find(tag);
  if (at == std::string::npos) return 0;
  return std::stoll(info.substr(at + tag.size()));
}

}  // namespace

TEST_CASE("a batch of promotions writes each key with one command, not one per job", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  std::vector<std::string> fields;
  for (int i = 1; i <= 40; ++i) {
    fields.push_back(base62(i, 9));  // one record bucket
    put_scheduled(r, keys, fields.back(), kNowMs - 1000 + i, i % 2 ? "email" : "resize", 3);
  }
  const std::int64_t rpush = command_calls(r, "rpush");
  const std::int64_t hset = command_calls(r, "hset");
  const std::int64_t zrem = command_calls(r, "zrem");
  const std::int64_t zadd = command_calls(r, "zadd");

  CHECK(promote_jobs(r, keys, 0, kNowMs) == std::vector<std::int64_t>{40, -1});
  CHECK(command_calls(r, "rpush") - rpush == 2);  // one list per name
  CHECK(command_calls(r, "hset") - hset == 1);    // one bucket
  CHECK(command_calls(r, "zrem") - zrem == 1);    // the scheduled zset
  CHECK(command_calls(r, "zadd") - zadd == 2);    // one priorities zset per name
  CHECK(ready_queue(r, keys, 0, "email").size() == 20);
  const auto resize = ready_queue(r, keys, 0, "resize");
  REQUIRE(resize.size() == 20);
  CHECK(resize.front().first.ends_with(fields[1]));  // due order kept
  CHECK(resize.back().first.ends_with(fields[39]));
  CHECK(hgetall(r, keys.counts(0)) ==
        std::map<std::string, std::string>{{"ready:email", "20"}, {"ready:resize", "20"}});
}
