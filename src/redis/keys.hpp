// Every Redis key jqmaster uses is built here, nowhere else.
//
// Keys of one shard carry the hash tag {<shard>}, so every script touches a single Redis Cluster
// slot. Per shard:
//   <p>:{s}:stats          hash   seq (job sequence), pushed, succeeded, failed, retried, dead
//   <p>:{s}:jobs           hash   field -> job record (MessagePack array, see lua/lib/preamble.lua)
//   <p>:{s}:names          set    job names pushed to this shard
//   <p>:{s}:ready:<name>   zset   ready jobs; score = priority, member = readyStamp + field
//   <p>:{s}:scheduled      zset   jobs waiting for a retry; score = due time (ms)
//   <p>:{s}:inflight       zset   running jobs; score = deadline (ms)
//   <p>:{s}:dead           zset   dead jobs; score = failure time (ms)
//   <p>:{s}:done:<field>   string finished record with its kept result; expires after result_ttl
// Global:
//   <p>:meta               hash   shards, created_at_ms, version
#pragma once

#include <string>
#include <string_view>

namespace jq::redis {

class Keys {
 public:
  explicit Keys(std::string prefix = "jq") : prefix_(std::move(prefix)) {}

  const std::string& prefix() const { return prefix_; }

  std::string meta() const;
  std::string stats(int shard) const;
  std::string jobs(int shard) const;
  std::string names(int shard) const;
  std::string ready_prefix(int shard) const;  // ready(shard, name) == ready_prefix(shard) + name
  std::string ready(int shard, std::string_view name) const;
  std::string scheduled(int shard) const;
  std::string inflight(int shard) const;
  std::string dead(int shard) const;
  std::string done(int shard, std::string_view field) const;

 private:
  std::string shard_key(int shard, std::string_view suffix) const;

  std::string prefix_;
};

}  // namespace jq::redis
