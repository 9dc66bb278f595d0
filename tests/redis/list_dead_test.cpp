// listDead-2.lua: dead jobs of a shard, newest first, optionally of one name.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
using jq::redis::bindings::ListDead;
using jq::store::JobState;

namespace {

struct DeadEntry {
  std::string field;
  std::int64_t failed_at_ms;
  std::string record;
};

std::vector<DeadEntry> list_dead(SyncRedis& r, const jq::redis::Keys& keys, int shard,
                                 const std::string& name, int limit) {
  Reply reply = r.eval(ListDead::call(ListDead::keys(keys, shard), {name, limit}));
  REQUIRE(ListDead::decode(reply));
  REQUIRE(reply.is_array());
  REQUIRE(reply.elements.size() % 3 == 0);
  std::vector<DeadEntry> out;
  for (std::size_t i = 0; i < reply.elements.size(); i += 3) {
    REQUIRE(reply.elements[i + 1].is_integer());
    out.push_back(
        {reply.elements[i].str, reply.elements[i + 1].integer, reply.elements[i + 2].str});
  }
  return out;
}

std::vector<std::string> fields(const std::vector<DeadEntry>& entries) {
  std::vector<std::string> out;
  for (const DeadEntry& e : entries) out.push_back(e.field);
  return out;
}

void put_dead(SyncRedis& r, const jq::redis::Keys& keys, const std::string& field,
              std::int64_t failed_at_ms, const std::string& name = "email") {
  auto rec = record_in(JobState::dead, 4);
  rec.name = name;
  rec.result = "\x81\xa4type\xa7\x66\x61ilure";
  put_record(r, keys, 0, field, rec);
  r.call({"ZADD", keys.dead(0), std::to_string(failed_at_ms), field});
}

}  // namespace

TEST_CASE("listDead returns dead jobs newest first with their failure time and record", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_dead(r, keys, "00000000A", kNowMs + 1);
  put_dead(r, keys, "00000000B", kNowMs + 3);
  put_dead(r, keys, "00000000C", kNowMs + 2);
  const std::string before = dump(r, keys.dead(0));

  auto entries = list_dead(r, keys, 0, "", 10);
  CHECK(fields(entries) == std::vector<std::string>{"00000000B", "00000000C", "00000000A"});
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].failed_at_ms == kNowMs + 3);
  CHECK(entries[0].record == raw_record(r, keys, 0, "00000000B"));
  CHECK(jq::store::decode_record(entries[0].record)->result == "\x81\xa4type\xa7\x66\x61ilure");
  CHECK(dump(r, keys.dead(0)) == before);
}

TEST_CASE("listDead stops at the limit", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_dead(r, keys, "00000000A", kNowMs + 1);
  put_dead(r, keys, "00000000B", kNowMs + 2);
  put_dead(r, keys, "00000000C", kNowMs + 3);

  CHECK(fields(list_dead(r, keys, 0, "", 2)) == std::vector<std::string>{"00000000C", "00000000B"});
  CHECK(list_dead(r, keys, 0, "", 0).empty());
}

TEST_CASE("listDead of a name skips the dead jobs of other names", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_dead(r, keys, "00000000A", kNowMs + 1, "email");
  put_dead(r, keys, "00000000B", kNowMs + 2, "resize");
  put_dead(r, keys, "00000000C", kNowMs + 3, "email");
  put_dead(r, keys, "00000000D", kNowMs + 4, "resize");

  CHECK(fields(list_dead(r, keys, 0, "email", 10)) ==
        std::vector<std::string>{"00000000C", "00000000A"});
  CHECK(fields(list_dead(r, keys, 0, "resize", 1)) == std::vector<std::string>{"00000000D"});
  CHECK(list_dead(r, keys, 0, "other", 10).empty());
}

TEST_CASE("listDead reads past its first chunk and skips members without a record", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  for (int i = 1; i <= 250; ++i) {
    put_dead(r, keys, base62(i, 9), kNowMs + i, i % 2 == 0 ? "email" : "resize");
  }
  r.call({"ZADD", keys.dead(0), std::to_string(kNowMs + 1000), "00000000-"});  // no record

  auto entries = list_dead(r, keys, 0, "email", 1000);
  REQUIRE(entries.size() == 125);
  CHECK(entries.front().field == base62(250, 9));
  CHECK(entries.back().field == base62(2, 9));
  CHECK(list_dead(r, keys, 0, "", 1000).size() == 250);
}

TEST_CASE("listDead scans at most 10000 dead jobs", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const int others = GENERATE(9999, 10000);
  put_dead(r, keys, "00000000A", kNowMs, "rare");  // the oldest
  std::vector<std::string> zadd = {"ZADD", keys.dead(0)};
  for (int i = 1; i <= others; ++i) {
    zadd.push_back(std::to_string(kNowMs + i));
    zadd.push_back(base62(1000 + i, 9));  // of no name: no record
  }
  r.call(zadd);

  CHECK(list_dead(r, keys, 0, "rare", 10).size() == (others < 10000 ? 1u : 0u));
}
