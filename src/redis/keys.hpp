// Every Redis key jqmaster uses is built here, nowhere else.
//
// Keys of one shard carry the hash tag {<shard>}, so every script touches a single Redis Cluster
// slot. Per shard:
//   <p>:{s}:stats          hash   seq (job sequence), pushed, succeeded, failed, retried, dead,
//                                 dispatched
//   <p>:{s}:jobs:<b>       hash   bucket <b> (a field's first 8 characters) of job records: the
//                                 field's last character -> record (MessagePack array, see
//                                 lua/lib/preamble.lua); at most 62 per bucket, so Redis keeps it
//                                 a compact listpack
//   <p>:{s}:names          set    job names pushed to this shard
//   <p>:{s}:ready:<name>   zset   the queue of <name>: priorities that have ready jobs
//                                 (score = member = priority)
//   <p>:{s}:ready:<name>#<priority>
//                          list   ready jobs of <name> with that priority, in the order they
//                                 became ready; entry = readyStamp + field
//                                 (lua/lib/preamble_1_ready_list.lua)
//   <p>:{s}:scheduled      zset   jobs waiting for a retry; score = due time (ms)
//   <p>:{s}:inflight       zset   running jobs; score = deadline (ms)
//   <p>:{s}:dead           zset   dead jobs; score = failure time (ms)
//   <p>:{s}:done:<field>   string finished record with its kept result; expires after result_ttl
//   <p>:{s}:counts         hash   ready:<name>, scheduled:<name>, running:<name>, dead:<name> ->
//                                 jobs in that state (absent = 0;
//                                 lua/lib/preamble_1_count_add.lua)
// Control plane, all in the one slot of the hash tag {w}:
//   <p>:{w}:workers        hash   worker id -> registration JSON
//   <p>:{w}:worker_urls    hash   url -> worker id
//   <p>:{w}:worker_seq     string counter behind worker ids ("w" + number)
//   <p>:{w}:slots:<id>     hash   master id -> slots of worker <id> that master holds
//   <p>:{w}:masters        zset   master id; score = heartbeat expiry (ms)
//   <p>:{w}:wstats:<id>    hash   counters of worker <id>
//   <p>:{w}:paused         set    names of paused queues
// Global:
//   <p>:meta               hash   shards, created_at_ms, version
// Pub/sub channel (not a key): <p>:events, messages "p <name> <shard> <priority> <member>" (a job
// of name became ready, maybe the queue's new head: lua/lib/preamble_1_announce_ready.lua),
// "s <due_ms>" (a retry was scheduled), "r <id>" (a result was stored), "w" (workers changed).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace jq::redis {

class Keys {
 public:
  // The layout of the keys and records below, kept in the meta hash when a store is created: a
  // master refuses a store of another layout (2: ready lists and record buckets).
  static constexpr int kLayoutVersion = 2;

  explicit Keys(std::string prefix = "jq") : prefix_(std::move(prefix)) {}

  const std::string& prefix() const { return prefix_; }

  std::string meta() const;
  std::string stats(int shard) const;
  std::string jobs_prefix(int shard) const;  // a record's bucket: jobs_prefix + field[0..8)
  std::string job_bucket(int shard, std::string_view field) const;
  // A record's field in its bucket: the job field's last character.
  static std::string_view job_slot(std::string_view field) { return field.substr(8); }
  std::string names(int shard) const;
  std::string ready_prefix(int shard) const;  // ready(shard, name) == ready_prefix(shard) + name
  std::string ready(int shard, std::string_view name) const;
  std::string ready_list(int shard, std::string_view name, std::int32_t priority) const;
  std::string scheduled(int shard) const;
  std::string inflight(int shard) const;
  std::string dead(int shard) const;
  std::string done_prefix(int shard) const;  // done(shard, f) == done_prefix(shard) + f
  std::string done(int shard, std::string_view field) const;
  std::string counts(int shard) const;

  std::string workers() const;
  std::string worker_urls() const;
  std::string worker_seq() const;
  std::string worker_slots_prefix() const;  // worker_slots(id) == worker_slots_prefix() + id
  std::string worker_slots(std::string_view worker_id) const;
  std::string masters() const;
  std::string worker_stats_prefix() const;  // worker_stats(id) == worker_stats_prefix() + id
  std::string worker_stats(std::string_view worker_id) const;
  std::string paused() const;

  std::string events_channel() const;

 private:
  std::string shard_key(int shard, std::string_view suffix) const;
  std::string control_key(std::string_view suffix) const;

  std::string prefix_;
};

}  // namespace jq::redis
