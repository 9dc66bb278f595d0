// Shared by the [redis] tests of the Lua scripts: one redis-server per test process, a fresh key
// prefix per test case (so test cases never see each other's keys), and helpers that read Redis
// directly to check what a script left behind.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <msgpack.hpp>

#include "src/redis/keys.hpp"
#include "src/redis/reply.hpp"
#include "src/redis/scripts.hpp"
#include "src/store/job_record.hpp"
#include "src/store/job_state.hpp"
#include "tests/support/redis_server.hpp"

namespace jq::test {

// Started on first use, stopped when the test process exits.
inline RedisServer& shared_redis() {
  static RedisServer server;
  return server;
}

// A key schema under a prefix no other test case of this process has used.
inline redis::Keys fresh_keys() {
  static int counter = 0;
  return redis::Keys("t" + std::to_string(++counter));
}

// One job as pushJobs-4.lua takes it (six ARGV).
struct PushArgs {
  std::string name = "email";
  std::string argument = "\x81\xa1k\x01";  // {"k": 1}
  std::int32_t priority = 0;
  int max_retry = 3;
  bool keep_result = false;
  std::int64_t timeout_ms = 30000;
};

inline constexpr std::int64_t kNowMs = 1700000000123;
inline constexpr std::int64_t kStampUs = 1700000000123456;

inline redis::Reply push_jobs(SyncRedis& r, const redis::Keys& keys, int shard,
                              const std::vector<PushArgs>& jobs, std::int64_t now_ms = kNowMs,
                              std::int64_t stamp_us = kStampUs) {
  std::vector<std::string> args = {std::to_string(now_ms), std::to_string(stamp_us)};
  for (const PushArgs& j : jobs) {
    args.insert(args.end(),
                {j.name, j.argument, std::to_string(j.priority), std::to_string(j.max_retry),
                 j.keep_result ? "1" : "0", std::to_string(j.timeout_ms)});
  }
  return r.eval(redis::ScriptId::push_jobs,
                {keys.stats(shard), keys.jobs(shard), keys.names(shard), keys.ready_prefix(shard)},
                args);
}

// The fields a push returned (fails the test when the reply is not an array of strings).
inline std::vector<std::string> fields_of(const redis::Reply& reply) {
  REQUIRE(reply.is_array());
  std::vector<std::string> fields;
  for (const redis::Reply& e : reply.elements) {
    REQUIRE(e.type == redis::Reply::Type::string);
    fields.push_back(e.str);
  }
  return fields;
}

// A record packed as the scripts pack it (13 slots, see lua/lib/preamble.lua).
inline std::string pack_record(const store::JobRecord& rec, const std::string& ready_member = "") {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  auto str = [&](const std::string& s) {
    pk.pack_str(static_cast<std::uint32_t>(s.size()));
    pk.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
  };
  pk.pack_array(13);
  str(rec.name);
  str(rec.argument);
  pk.pack_int64(rec.priority);
  pk.pack_int64(rec.max_retry);
  pk.pack_int64(rec.keep_result ? 1 : 0);
  pk.pack_int64(rec.timeout_ms);
  pk.pack_int64(static_cast<std::int64_t>(rec.state));
  pk.pack_int64(rec.attempts);
  pk.pack_int64(rec.enqueued_at_ms);
  str(ready_member);
  str(rec.last_error);
  str(rec.traceparent);
  str(rec.result);
  return std::string(buf.data(), buf.size());
}

inline store::JobRecord record_in(store::JobState state, int attempts = 0) {
  store::JobRecord rec;
  rec.name = "email";
  rec.argument = "\x81\xa1k\x01";
  rec.max_retry = 3;
  rec.timeout_ms = 30000;
  rec.state = state;
  rec.attempts = attempts;
  rec.enqueued_at_ms = kNowMs;
  return rec;
}

// Writes a record straight into the jobs hash, as if an earlier transition had left it there.
inline void put_record(SyncRedis& r, const redis::Keys& keys, int shard, const std::string& field,
                       const store::JobRecord& rec) {
  REQUIRE(r.call({"HSET", keys.jobs(shard), field, pack_record(rec)}).integer == 1);
}

inline std::optional<std::string> hget(SyncRedis& r, const std::string& key,
                                       const std::string& field) {
  redis::Reply reply = r.call({"HGET", key, field});
  if (reply.is_nil()) return std::nullopt;
  return reply.str;
}

inline std::optional<store::JobRecord> read_record(SyncRedis& r, const redis::Keys& keys, int shard,
                                                   const std::string& field) {
  auto raw = hget(r, keys.jobs(shard), field);
  if (!raw) return std::nullopt;
  return store::decode_record(*raw);
}

// Slot `index` (0-based) of a packed record, as a string (e.g. the ready member, slot 9).
inline std::string record_string_slot(const std::string& packed, std::size_t index) {
  msgpack::object_handle handle = msgpack::unpack(packed.data(), packed.size());
  const msgpack::object& root = handle.get();
  REQUIRE(root.type == msgpack::type::ARRAY);
  REQUIRE(index < root.via.array.size);
  const msgpack::object& slot = root.via.array.ptr[index];
  REQUIRE(slot.type == msgpack::type::STR);
  return std::string(slot.via.str.ptr, slot.via.str.size);
}

// ZRANGE key 0 -1 WITHSCORES: (member, score) in order.
inline std::vector<std::pair<std::string, std::int64_t>> zrange(SyncRedis& r,
                                                                const std::string& key) {
  redis::Reply reply = r.call({"ZRANGE", key, "0", "-1", "WITHSCORES"});
  REQUIRE(reply.is_array());
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    out.emplace_back(reply.elements[i].str,
                     static_cast<std::int64_t>(std::stod(reply.elements[i + 1].str)));
  }
  return out;
}

inline bool exists(SyncRedis& r, const std::string& key) {
  return r.call({"EXISTS", key}).integer == 1;
}

// The whole content of a key (DUMP), to check that a script changed nothing.
inline std::string dump(SyncRedis& r, const std::string& key) {
  return r.call({"DUMP", key}).str;
}

}  // namespace jq::test
