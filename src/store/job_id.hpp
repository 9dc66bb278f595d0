// Job ids carry their shard: "<shard>-<field>", where field is the 9-character base62 sequence
// number the push script gave the job in that shard. Any master finds a job's keys from its id.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace jq::store {

inline constexpr std::size_t kFieldLength = 9;

struct JobId {
  int shard = 0;
  std::string field;

  std::string str() const { return std::to_string(shard) + "-" + field; }
};

// nullopt for anything that is not an id of a store with `shards` shards.
std::optional<JobId> parse_job_id(std::string_view text, int shards);

}  // namespace jq::store
