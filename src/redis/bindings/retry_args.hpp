// The retry policy as failJob and reapJobs take it (the same four ARGV in both).
#pragma once

#include <cstdint>
#include <string>

namespace jq::redis::bindings {

struct RetryArgs {
  std::int64_t base_ms = 0;       // delay before the first retry
  std::int64_t max_ms = 0;        // the longest delay
  double jitter = 0;              // spread, a fraction (0-1)
  std::int64_t result_ttl_s = 0;  // how long a dead job's kept failure waits to be fetched
};

inline std::string jitter_arg(double jitter) {
  return std::to_string(jitter);
}

}  // namespace jq::redis::bindings
