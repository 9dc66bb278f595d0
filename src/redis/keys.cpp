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

std::string Keys::meta() const { return prefix_ + ":meta"; }
std::string Keys::stats(int shard) const { return shard_key(shard, "stats"); }
std::string Keys::jobs(int shard) const { return shard_key(shard, "jobs"); }
std::string Keys::names(int shard) const { return shard_key(shard, "names"); }
std::string Keys::ready_prefix(int shard) const { return shard_key(shard, "ready:"); }
std::string Keys::ready(int shard, std::string_view name) const {
  return ready_prefix(shard).append(name);
}
std::string Keys::scheduled(int shard) const { return shard_key(shard, "scheduled"); }
std::string Keys::inflight(int shard) const { return shard_key(shard, "inflight"); }
std::string Keys::dead(int shard) const { return shard_key(shard, "dead"); }
std::string Keys::done(int shard, std::string_view field) const {
  return shard_key(shard, "done:").append(field);
}

}  // namespace jq::redis
