// Every Redis key jqmaster uses is named here: the whole keys and the prefixes the engine passes
// to the scripts through KEYS. The data model (each key pattern, its type, what it holds and which
// scripts write it) is documented once, in docs/REDIS.md.
//
// Below a prefix, a key is the prefix followed by a name, field or id (plain concatenation, in
// C++ as in Lua: done(shard, f) == done_prefix(shard) + f). Keys with more structure are derived
// only in Lua, from what a script reads: a record's bucket and slot by record_at
// (lua/lib/preamble.lua), a priority's ready list by ready_list
// (lua/lib/preamble_1_ready_list.lua). Tests evaluate those same functions
// (tests/support/records.hpp); there is no C++ copy.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jq::redis {

class Keys {
 public:
  // The layout of the keys and records below, kept in the meta hash when a store is created: a
  // master refuses a store of another layout (2: ready lists and record buckets; 3: jobs held by
  // constraints wait in their own shard, not under {c}).
  static constexpr int kLayoutVersion = 3;

  explicit Keys(std::string prefix = "jq") : prefix_(std::move(prefix)) {}

  const std::string& prefix() const { return prefix_; }

  std::string meta() const;
  // Two keys of different hash tags that nothing writes: each handshake runs a read-only script
  // naming both, to learn whether the server lets a script span hash tags
  // (redis::Node::scripts_span_tags). Below the prefix, so that an ACL granting jqmaster its own
  // keys (~jq:*) lets the probe run: otherwise it would read as a cluster's refusal.
  std::string span_probe_a() const;
  std::string span_probe_b() const;
  std::string stats(int shard) const;
  std::string jobs_prefix(int shard) const;  // record buckets below it: record_at (Lua)
  std::string names(int shard) const;
  std::string ready_prefix(int shard) const;  // ready(shard, name) == ready_prefix(shard) + name
  std::string ready(int shard, std::string_view name) const;  // lists below it: ready_list (Lua)
  std::string scheduled(int shard) const;
  std::string inflight(int shard) const;
  std::string dead(int shard) const;
  std::string done_prefix(int shard) const;  // done(shard, f) == done_prefix(shard) + f
  std::string done(int shard, std::string_view field) const;
  // Set while a pusher waits for the job's result: watch(shard, f) == watch_prefix(shard) + f
  std::string watch_prefix(int shard) const;
  std::string watch(int shard, std::string_view field) const;
  std::string counts(int shard) const;
  std::string unique_prefix(int shard) const;  // claims below it: unique_claim (Lua)
  std::string order_prefix(int shard) const;   // an ordering key's line: order_prefix + key
  // Recurring schedules: the records of the schedules that live in the shard (name -> MessagePack
  // map), and the claims of the names whose home is the shard (name -> "<shard> <token> ...").
  std::string schedules(int shard) const;
  std::string schedule_homes(int shard) const;
  // The tombstones in schedules (name -> when written, ms), swept a day later (removeSchedule).
  std::string schedule_tombstones(int shard) const;
  // <p>:{s}:c: -- the shard's jobs held back by constraints: the scripts derive the held zset of
  // a pair and the counts below it (lua/lib/preamble_1_holds_of.lua); the two the engine reads
  // are held_waiting (== held_prefix + "waiting:" + name) and held_tallies (== held_prefix +
  // "tallies").
  std::string held_prefix(int shard) const;
  std::string held_waiting(int shard, std::string_view constraint) const;
  std::string held_tallies(int shard) const;

  std::string workers() const;
  std::string worker_urls() const;
  std::string worker_seq() const;
  std::string worker_slots_prefix() const;  // worker_slots(id) == worker_slots_prefix() + id
  std::string worker_slots(std::string_view worker_id) const;
  std::string masters() const;
  // The script libraries masters use (beatMaster-2.lua), beside `masters` in the same slot.
  std::string libraries() const;
  std::string worker_stats_prefix() const;  // worker_stats(id) == worker_stats_prefix() + id
  std::string worker_stats(std::string_view worker_id) const;
  std::string paused() const;

  // Constraints (hash tag {c}): the definitions, shared by every master, and the live state the
  // dispatch side keeps per (constraint, key). A constraint's name cannot hold '#', so
  // "<name>#<key>" names one key of one constraint without ambiguity, whatever the key holds.
  std::string constraints() const;
  // <p>:{c}: -- the scripts derive every per-key state key below it (the ones below, and
  // held_shards:, refusals:, held_keys:, wake_due: lua/lib/preamble_1_constraint_context.lua).
  std::string constraint_state_prefix() const;
  std::string constraints_version() const;
  // The hash admitJobs counts starts in (started:<name>), read by /metrics;
  // == constraint_state_prefix() + "counters", the name that script derives.
  std::string constraint_counters() const;
  // constraint_lease_keys(n) == constraint_lease_keys_prefix() + n
  std::string constraint_lease_keys_prefix() const;
  std::string constraint_lease_keys(std::string_view name) const;
  // constraint_lease(n, k) == constraint_leases(n) + k; constraint_leases(n) ==
  // constraint_lease_prefix() + n + "#".
  std::string constraint_lease_prefix() const;
  std::string constraint_leases(std::string_view name) const;
  std::string constraint_lease(std::string_view name, std::string_view key) const;
  // constraint_tat(n, k) == constraint_tats(n) + k; constraint_tats(n) ==
  // constraint_tat_prefix() + n + "#".
  std::string constraint_tat_prefix() const;
  std::string constraint_tats(std::string_view name) const;
  std::string constraint_tat(std::string_view name, std::string_view key) const;

  // Events between masters (src/events/event.hpp) go by sharded pub/sub (SPUBLISH), each on a
  // channel in the slot of the keys of the script that publishes it, so on a Redis Cluster a
  // script never reaches outside its slot and a message stays on its node and replicas: one
  // channel per shard, one for the worker control plane ({w}), one for constraints ({c}).
  std::string events_channel(int shard) const;
  std::string control_channel() const;
  std::string constraint_channel() const;
  // Every channel a master listens to: the shards' 0 .. shards-1, then control and constraints.
  std::vector<std::string> all_channels(int shards) const;

 private:
  std::string shard_key(int shard, std::string_view suffix) const;
  std::string control_key(std::string_view suffix) const;
  std::string constraint_key(std::string_view suffix) const;

  std::string prefix_;
};

}  // namespace jq::redis
