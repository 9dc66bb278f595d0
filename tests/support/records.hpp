// Jobs' records as the scripts keep them, read and written directly by tests of both kinds
// ([redis] and [http]).
//
// Where a record lives (its bucket and the slot in it) and which list holds a ready job are
// derived by the scripts themselves (record_at in lua/lib/preamble.lua, ready_list in
// lua/lib/preamble_1_ready_list.lua); there is no C++ copy of either. Tests evaluate those same
// Lua functions (eval_preamble), so a change of the derivation cannot leave a test checking an
// older layout.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "src/redis/keys.hpp"
#include "src/redis/reply.hpp"
#include "src/redis/script_sources.hpp"
#include "src/store/job_record.hpp"
#include "tests/support/redis_server.hpp"

namespace jq::test {

// EVAL of `body` after the scripts' preamble and every helper of lua/lib.
inline redis::Reply eval_preamble(SyncRedis& r, std::string_view body,
                                  const std::vector<std::string>& keys,
                                  const std::vector<std::string>& args) {
  std::vector<std::string> cmd = {"EVAL",
                                  std::string(redis::preamble_source()) + "\n" + std::string(body),
                                  std::to_string(keys.size())};
  cmd.insert(cmd.end(), keys.begin(), keys.end());
  cmd.insert(cmd.end(), args.begin(), args.end());
  redis::Reply reply = r.call(cmd);
  INFO(reply.str);
  REQUIRE_FALSE(reply.is_error());
  return reply;
}

// Where the record of `field` lives: the bucket hash and the slot in it (record_at).
struct RecordAt {
  std::string bucket;
  std::string slot;
};

inline RecordAt record_at(SyncRedis& r, const redis::Keys& keys, int shard,
                          const std::string& field) {
  redis::Reply reply =
      eval_preamble(r, "return {record_at(KEYS[1], ARGV[1])}", {keys.jobs_prefix(shard)}, {field});
  REQUIRE(reply.elements.size() == 2);
  return {reply.elements[0].str, reply.elements[1].str};
}

// The ready list of `name`'s jobs of one priority (ready_list).
inline std::string ready_list(SyncRedis& r, const redis::Keys& keys, int shard,
                              const std::string& name, std::int64_t priority) {
  redis::Reply reply = eval_preamble(r, "return ready_list(KEYS[1], ARGV[1])",
                                     {keys.ready(shard, name)}, {std::to_string(priority)});
  REQUIRE(reply.type == redis::Reply::Type::string);
  return reply.str;
}

// A job's packed record as stored, nullopt when it has none.
inline std::optional<std::string> raw_record(SyncRedis& r, const redis::Keys& keys, int shard,
                                             const std::string& field) {
  const RecordAt at = record_at(r, keys, shard, field);
  redis::Reply reply = r.call({"HGET", at.bucket, at.slot});
  if (reply.is_nil()) return std::nullopt;
  return reply.str;
}

inline std::optional<store::JobRecord> read_record(SyncRedis& r, const redis::Keys& keys, int shard,
                                                   const std::string& field) {
  auto raw = raw_record(r, keys, shard, field);
  if (!raw) return std::nullopt;
  return store::decode_record(*raw);
}

// The record buckets of a shard, sorted.
inline std::vector<std::string> job_buckets(SyncRedis& r, const redis::Keys& keys, int shard) {
  std::vector<std::string> out;
  for (const redis::Reply& k : r.call({"KEYS", keys.jobs_prefix(shard) + "*"}).elements) {
    out.push_back(k.str);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// How many records a shard holds.
inline long long record_count(SyncRedis& r, const redis::Keys& keys, int shard) {
  long long n = 0;
  for (const std::string& bucket : job_buckets(r, keys, shard)) {
    n += r.call({"HLEN", bucket}).integer;
  }
  return n;
}

}  // namespace jq::test
