#include "src/redis/keys.hpp"

namespace jq::redis {

std::string Keys::shard_key(int shard, std::string_view suffix) const {
  std::string key;
  key.reserve(prefix_.size() + suffix.size() + 8);
  key += prefix_;
  key += ":{";
  key += std::to_string(shard);
  key += "}:";
  key += suffix;
  return key;
}

std::string Keys::control_key(std::string_view suffix) const {
  std::string key;
  key.reserve(prefix_.size() + suffix.size() + 5);
  key += prefix_;
  key += ":{w}:";
  key += suffix;
  return key;
}

std::string Keys::constraint_key(std::string_view suffix) const {
  std::string key;
  key.reserve(prefix_.size() + suffix.size() + 5);
  key += prefix_;
  key += ":{c}:";
  key += suffix;
  return key;
}

std::string Keys::meta() const {
  return prefix_ + ":meta";
}
std::string Keys::span_probe_a() const {
  return prefix_ + ":{probe-a}";
}
std::string Keys::span_probe_b() const {
  return prefix_ + ":{probe-b}";
}
std::string Keys::stats(int shard) const {
  return shard_key(shard, "stats");
}
std::string Keys::jobs_prefix(int shard) const {
  return shard_key(shard, "jobs:");
}
std::string Keys::names(int shard) const {
  return shard_key(shard, "names");
}
std::string Keys::ready_prefix(int shard) const {
  return shard_key(shard, "ready:");
}
std::string Keys::ready(int shard, std::string_view name) const {
  return ready_prefix(shard).append(name);
}
std::string Keys::scheduled(int shard) const {
  return shard_key(shard, "scheduled");
}
std::string Keys::inflight(int shard) const {
  return shard_key(shard, "inflight");
}
std::string Keys::dead(int shard) const {
  return shard_key(shard, "dead");
}
std::string Keys::done_prefix(int shard) const {
  return shard_key(shard, "done:");
}
std::string Keys::done(int shard, std::string_view field) const {
  return done_prefix(shard).append(field);
}
std::string Keys::watch_prefix(int shard) const {
  return shard_key(shard, "watch:");
}
std::string Keys::watch(int shard, std::string_view field) const {
  return watch_prefix(shard).append(field);
}
std::string Keys::counts(int shard) const {
  return shard_key(shard, "counts");
}
std::string Keys::unique_prefix(int shard) const {
  return shard_key(shard, "unique:");
}
std::string Keys::order_prefix(int shard) const {
  return shard_key(shard, "order:");
}
std::string Keys::schedules(int shard) const {
  return shard_key(shard, "schedules");
}
std::string Keys::schedule_homes(int shard) const {
  return shard_key(shard, "schedule_homes");
}
std::string Keys::schedule_tombstones(int shard) const {
  return shard_key(shard, "schedule_tombstones");
}
std::string Keys::held_prefix(int shard) const {
  return shard_key(shard, "c:");
}
std::string Keys::held_waiting(int shard, std::string_view constraint) const {
  return held_prefix(shard).append("waiting:").append(constraint);
}
std::string Keys::held_tallies(int shard) const {
  return held_prefix(shard).append("tallies");
}

std::string Keys::workers() const {
  return control_key("workers");
}
std::string Keys::worker_urls() const {
  return control_key("worker_urls");
}
std::string Keys::worker_seq() const {
  return control_key("worker_seq");
}
std::string Keys::worker_slots_prefix() const {
  return control_key("slots:");
}
std::string Keys::worker_slots(std::string_view worker_id) const {
  return worker_slots_prefix().append(worker_id);
}
std::string Keys::masters() const {
  return control_key("masters");
}
std::string Keys::libraries() const {
  return control_key("libraries");
}
std::string Keys::worker_stats_prefix() const {
  return control_key("wstats:");
}
std::string Keys::worker_stats(std::string_view worker_id) const {
  return worker_stats_prefix().append(worker_id);
}
std::string Keys::paused() const {
  return control_key("paused");
}

std::string Keys::constraint_state_prefix() const {
  return constraint_key("");
}
std::string Keys::constraints() const {
  return constraint_key("constraints");
}
std::string Keys::constraints_version() const {
  return constraint_key("constraints_version");
}
std::string Keys::constraint_counters() const {
  return constraint_key("counters");
}
std::string Keys::constraint_lease_keys_prefix() const {
  return constraint_key("lease_keys:");
}
std::string Keys::constraint_lease_keys(std::string_view name) const {
  return constraint_lease_keys_prefix().append(name);
}
std::string Keys::constraint_lease_prefix() const {
  return constraint_key("lease:");
}
std::string Keys::constraint_leases(std::string_view name) const {
  return constraint_lease_prefix().append(name).append("#");
}
std::string Keys::constraint_lease(std::string_view name, std::string_view key) const {
  return constraint_leases(name).append(key);
}
std::string Keys::constraint_tat_prefix() const {
  return constraint_key("tat:");
}
std::string Keys::constraint_tats(std::string_view name) const {
  return constraint_tat_prefix().append(name).append("#");
}
std::string Keys::constraint_tat(std::string_view name, std::string_view key) const {
  return constraint_tats(name).append(key);
}

std::string Keys::events_channel(int shard) const {
  return shard_key(shard, "events");
}
std::string Keys::control_channel() const {
  return control_key("events");
}
std::string Keys::constraint_channel() const {
  return constraint_key("events");
}
std::vector<std::string> Keys::all_channels(int shards) const {
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(shards) + 2);
  for (int s = 0; s < shards; ++s) out.push_back(events_channel(s));
  out.push_back(control_channel());
  out.push_back(constraint_channel());
  return out;
}

}  // namespace jq::redis
