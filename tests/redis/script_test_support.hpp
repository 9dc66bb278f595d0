// Shared by the [redis] tests of the Lua scripts: one redis-server per test process, a fresh key
// prefix per test case (so test cases never see each other's keys), and helpers that read Redis
// directly to check what a script left behind.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <msgpack.hpp>

#include "src/redis/bindings/all.hpp"
#include "src/redis/keys.hpp"
#include "src/redis/reply.hpp"
#include "src/redis/script_sources.hpp"
#include "src/redis/scripts.hpp"
#include "src/store/job_record.hpp"
#include "src/store/job_state.hpp"
#include "tests/support/records.hpp"
#include "tests/support/redis_server.hpp"

namespace jq::test {

// One job as pushJobs-10.lua takes it (PushJobs::Job, with test defaults).
struct PushArgs {
  std::string name = "email";
  std::string argument = "\x81\xa1k\x01";  // {"k": 1}
  std::int32_t priority = 0;
  int max_retry = 3;
  bool keep_result = false;
  std::int64_t timeout_ms = 30000;
  std::int64_t ready_at_ms = 0;
  std::string unique_key{};
  bool unique_until_started = false;
  std::int64_t unique_for_ms = 86'400'000;
  std::string ordering_key{};
  std::string constraints{};  // MessagePack [name, key, ...] of the constraints matched
  redis::bindings::PushJobs::OnDuplicate on_duplicate =
      redis::bindings::PushJobs::OnDuplicate::keep;
};

inline constexpr std::int64_t kNowMs = 1700000000123;
inline constexpr std::int64_t kStampUs = 1700000000123456;
inline constexpr std::int64_t kMaxListBytes = 1 << 20;  // limits.max_body_bytes' default

// pushJobs-10.lua: a batch of `jobs` in `shard`, all with `traceparent` ('' for none); `take`:
// the jobs to take at once, one byte per job ('' none).
inline redis::Reply push_jobs(SyncRedis& r, const redis::Keys& keys, int shard,
                              const std::vector<PushArgs>& jobs, std::int64_t now_ms = kNowMs,
                              std::int64_t stamp_us = kStampUs, const std::string& traceparent = "",
                              std::int64_t max_list_bytes = kMaxListBytes,
                              const std::string& take = "", const std::string& taken_by = "") {
  using redis::bindings::PushJobs;
  PushJobs::Args args{now_ms,      stamp_us, keys.events_channel(shard),
                      traceparent, shard,    max_list_bytes,
                      take,        {},       taken_by};
  for (const PushArgs& j : jobs) {
    args.jobs.push_back({j.name, j.argument, j.priority, j.max_retry, j.keep_result, j.timeout_ms,
                         j.ready_at_ms, j.unique_key, j.unique_until_started, j.unique_for_ms,
                         j.ordering_key, j.constraints, j.on_duplicate});
  }
  redis::Reply reply = r.eval(PushJobs::call(PushJobs::keys(keys, shard), std::move(args)));
  REQUIRE(PushJobs::decode(reply, jobs.size()));
  return reply;
}

// A script's array of integers, e.g. fetchResult's {2, state, attempts, keep_result}; fails the
// test on anything else.
inline std::vector<std::int64_t> integers(const redis::Reply& reply) {
  REQUIRE(reply.is_array());
  std::vector<std::int64_t> out;
  for (const redis::Reply& e : reply.elements) {
    REQUIRE(e.is_integer());
    out.push_back(e.integer);
  }
  return out;
}

// The fields a push returned, one per job (fails the test when the reply is not a push's).
inline std::vector<std::string> fields_of(const redis::Reply& reply) {
  REQUIRE(reply.is_array());
  REQUIRE(reply.elements.size() == 4);
  REQUIRE(reply.elements[0].is_array());
  std::vector<std::string> fields;
  for (const redis::Reply& e : reply.elements[0].elements) {
    REQUIRE(e.type == redis::Reply::Type::string);
    fields.push_back(e.str);
  }
  return fields;
}

// A record packed as the scripts pack it (13 slots, see lua/lib/preamble.lua); its ready stamp
// is the first 9 characters of `ready_member`.
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
  str(ready_member.substr(0, 9));
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

// Writes a record straight into its bucket, as if an earlier transition had left it there.
inline void put_record(SyncRedis& r, const redis::Keys& keys, int shard, const std::string& field,
                       const store::JobRecord& rec, const std::string& ready_member = "") {
  const RecordAt at = record_at(r, keys, shard, field);
  REQUIRE(r.call({"HSET", at.bucket, at.slot, pack_record(rec, ready_member)}).integer == 1);
}

// Appends `member` to the ready list of (name, priority), as make_ready does.
inline void put_ready(SyncRedis& r, const redis::Keys& keys, int shard, const std::string& name,
                      std::int32_t priority, const std::string& member) {
  r.call({"RPUSH", ready_list(r, keys, shard, name, priority), member});
  r.call({"ZADD", keys.ready(shard, name), std::to_string(priority), std::to_string(priority)});
}

inline std::optional<std::string> hget(SyncRedis& r, const std::string& key,
                                       const std::string& field) {
  redis::Reply reply = r.call({"HGET", key, field});
  if (reply.is_nil()) return std::nullopt;
  return reply.str;
}

// Every record bucket of a shard with its content (DUMP), to check that a script changed nothing.
inline std::string job_buckets_dump(SyncRedis& r, const redis::Keys& keys, int shard) {
  std::string out;
  for (const std::string& bucket : job_buckets(r, keys, shard)) {
    out += bucket + "=" + r.call({"DUMP", bucket}).str + ";";
  }
  return out;
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

// A job's member in its ready list (as its record names it): its stamp (9), then its field.
inline std::string member_of(SyncRedis& r, const redis::Keys& keys, int shard,
                             const std::string& field) {
  auto raw = raw_record(r, keys, shard, field);
  REQUIRE(raw);
  return record_string_slot(*raw, 9) + field;
}

// (member, score) pairs of a ZRANGE ... WITHSCORES reply, in order.
inline std::vector<std::pair<std::string, std::int64_t>> scored_members(const redis::Reply& reply) {
  REQUIRE(reply.is_array());
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    out.emplace_back(reply.elements[i].str,
                     static_cast<std::int64_t>(std::stod(reply.elements[i + 1].str)));
  }
  return out;
}

// ZRANGE key 0 -1 WITHSCORES: (member, score) in order.
inline std::vector<std::pair<std::string, std::int64_t>> zrange(SyncRedis& r,
                                                                const std::string& key) {
  return scored_members(r.call({"ZRANGE", key, "0", "-1", "WITHSCORES"}));
}

// The jobs of an inflight zset, (field, deadline) in deadline order: its keeper, at +inf
// (lua/lib/preamble_2_inflight_deadlines.lua), is not a job.
inline std::vector<std::pair<std::string, std::int64_t>> running_deadlines(SyncRedis& r,
                                                                           const std::string& key) {
  return scored_members(r.call({"ZRANGE", key, "-inf", "(+inf", "BYSCORE", "WITHSCORES"}));
}

// The ready queue of a name, (member, priority) in the order reserveJobs takes them: the lists
// of its priorities, best first. Fails the test if a priority has no list or a list no priority.
inline std::vector<std::pair<std::string, std::int64_t>> ready_queue(SyncRedis& r,
                                                                     const redis::Keys& keys,
                                                                     int shard,
                                                                     const std::string& name) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  auto priorities = zrange(r, keys.ready(shard, name));
  for (const auto& [member, priority] : priorities) {
    REQUIRE(member == std::to_string(priority));
    redis::Reply list = r.call({"LRANGE", ready_list(r, keys, shard, name, priority), "0", "-1"});
    REQUIRE(!list.elements.empty());
    for (const redis::Reply& m : list.elements) out.emplace_back(m.str, priority);
  }
  auto lists = r.call({"KEYS", keys.ready(shard, name) + "#*"}).elements;
  REQUIRE(lists.size() == priorities.size());
  return out;
}

// The priority of `member` in the ready queue of `name`, nullopt when it is not there.
inline std::optional<std::int64_t> ready_priority(SyncRedis& r, const redis::Keys& keys, int shard,
                                                  const std::string& name,
                                                  const std::string& member) {
  for (const auto& [m, priority] : ready_queue(r, keys, shard, name)) {
    if (m == member) return priority;
  }
  return std::nullopt;
}

inline bool exists(SyncRedis& r, const std::string& key) {
  return r.call({"EXISTS", key}).integer == 1;
}

// The whole content of a key (DUMP), to check that a script changed nothing.
inline std::string dump(SyncRedis& r, const std::string& key) {
  return r.call({"DUMP", key}).str;
}

// ZSCORE as an integer, nullopt when the member is absent.
inline std::optional<std::int64_t> zscore(SyncRedis& r, const std::string& key,
                                          const std::string& member) {
  redis::Reply reply = r.call({"ZSCORE", key, member});
  if (reply.is_nil()) return std::nullopt;
  return static_cast<std::int64_t>(std::stod(reply.str));
}

// Fixed-width base62 as lua/lib/preamble.lua writes it (ready stamps, fields).
inline std::string base62(std::int64_t n, std::size_t width) {
  static constexpr char kDigits[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::string out(width, '0');
  for (std::size_t i = width; i-- > 0; n /= 62) out[i] = kDigits[n % 62];
  return out;
}

// Puts a running job (attempt `rec.attempts`) where reserveJobs would have left it: its record,
// its deadline in inflight and its count.
inline void put_running(SyncRedis& r, const redis::Keys& keys, int shard, const std::string& field,
                        const store::JobRecord& rec, std::int64_t deadline_ms = kNowMs + 30000) {
  put_record(r, keys, shard, field, rec, base62(kStampUs, 9) + field);
  r.call({"ZADD", keys.inflight(shard), std::to_string(deadline_ms), field});
  r.call({"HINCRBY", keys.counts(shard), "running:" + rec.name, "1"});
}

// HGETALL as a map (e.g. the counts or stats hash of a shard).
inline std::map<std::string, std::string> hgetall(SyncRedis& r, const std::string& key) {
  redis::Reply reply = r.call({"HGETALL", key});
  REQUIRE(reply.is_array());
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    out[reply.elements[i].str] = reply.elements[i + 1].str;
  }
  return out;
}

// reserveJobs-9.lua: up to `max` ready jobs of `name`, bounded by (bound_priority,
// bound_member) when bound_priority is not empty. The whole answer: the queue's head after
// the reservation (member, priority), the jobs of the name left ready in the shard, then field
// and record of each job taken. `token`: the call's, which its jobs keep while they run.
inline redis::Reply reserve_jobs_reply(SyncRedis& r, const redis::Keys& keys, int shard,
                                       const std::string& name, int max,
                                       std::int64_t now_ms = kNowMs,
                                       const std::string& bound_priority = "",
                                       const std::string& bound_member = "",
                                       const std::string& token = "t") {
  using redis::bindings::ReserveJobs;
  std::optional<std::int64_t> bound;
  if (!bound_priority.empty()) bound = std::stoll(bound_priority);
  redis::Reply reply =
      r.eval(ReserveJobs::call(ReserveJobs::keys(keys, shard, name),
                               {now_ms, max, bound, bound_member, name, shard, token}));
  REQUIRE(ReserveJobs::decode(reply));
  return reply;
}

// The same, only the jobs taken: {field1, record1, ...}.
inline redis::Reply reserve_jobs(SyncRedis& r, const redis::Keys& keys, int shard,
                                 const std::string& name, int max, std::int64_t now_ms = kNowMs,
                                 const std::string& bound_priority = "",
                                 const std::string& bound_member = "",
                                 const std::string& token = "t") {
  redis::Reply reply =
      reserve_jobs_reply(r, keys, shard, name, max, now_ms, bound_priority, bound_member, token);
  REQUIRE(reply.is_array());
  REQUIRE(reply.elements.size() >= 3);
  reply.elements.erase(reply.elements.begin(), reply.elements.begin() + 3);
  return reply;
}

// Pushes one job and reserves it: a running job in attempt 1, as a dispatcher holds it (its
// deadline is kNowMs + its timeout).
inline std::string push_and_reserve(SyncRedis& r, const redis::Keys& keys, int shard,
                                    const PushArgs& job = {}) {
  auto field = fields_of(push_jobs(r, keys, shard, {job}));
  redis::Reply reply = reserve_jobs(r, keys, shard, job.name, 1);
  REQUIRE(reply.elements.size() == 2);
  REQUIRE(reply.elements[0].str == field[0]);
  return field[0];
}

// A second connection subscribed (SSUBSCRIBE) to every events channel of `keys` (16 shards,
// control, constraints), to check what scripts publish.
class EventListener {
 public:
  EventListener(std::uint16_t port, const redis::Keys& keys)
      : sub_(port), channel_(keys.events_channel(0)) {
    for (const std::string& channel : keys.all_channels(16)) {
      redis::Reply confirm = sub_.call({"SSUBSCRIBE", channel});
      REQUIRE(confirm.is_array());
    }
  }

  // Every message published on the channel since the last take(), in order. Publishes an end
  // marker through `r` and reads up to it: Redis delivers in publish order, so nothing published
  // before the marker can still be on its way.
  std::vector<std::string> take(SyncRedis& r) {
    r.call({"SPUBLISH", channel_, kEndMarker});
    std::vector<std::string> messages;
    for (;;) {
      redis::Reply message = sub_.read();  // {"smessage", channel, payload}
      REQUIRE(message.is_array());
      REQUIRE(message.elements.size() == 3);
      if (message.elements[2].str == kEndMarker) return messages;
      messages.push_back(message.elements[2].str);
    }
  }

 private:
  static constexpr const char* kEndMarker = "-- end of test events --";
  SyncRedis sub_;
  std::string channel_;
};

}  // namespace jq::test
