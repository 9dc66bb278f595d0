// Redis's memory against its limit, as INFO memory reports it: whether Redis refuses writes for
// lack of memory right now, and what it does when full (its maxmemory-policy).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace jq::redis {

struct MemoryInfo {
  std::int64_t used = 0;         // used_memory (bytes)
  std::int64_t max = 0;          // maxmemory (bytes); 0: no limit
  std::int64_t not_counted = 0;  // mem_not_counted_for_evict: buffers the limit leaves out
  std::string policy;            // maxmemory_policy ("noeviction", "allkeys-lru", ...)

  // Redis's own test before a command that may grow memory: true means it refuses such
  // commands (-OOM) under noeviction, and evicts keys first under any other policy.
  bool over_limit() const { return max > 0 && used - not_counted > max; }
};

// The fields of an INFO (memory) answer; nullopt when used_memory or maxmemory is missing.
std::optional<MemoryInfo> parse_memory_info(std::string_view info);

}  // namespace jq::redis
