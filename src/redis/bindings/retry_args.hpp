// What failJob and reapJobs share: both end attempts through fail_running
// (lua/lib/preamble_5_fail_running.lua), so they take the same ten KEYS and the same four
// ARGV of the retry policy.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct RetryArgs {
  std::int64_t base_ms = 0;       // delay before the first retry
  std::int64_t max_ms = 0;        // the longest delay
  double jitter = 0;              // spread, a fraction (0-1)
  std::int64_t result_ttl_s = 0;  // how long a dead job's kept failure waits to be fetched
};

struct FailKeys {
  static constexpr std::array<std::string_view, 10> names = {
      "jobs",   "inflight", "scheduled",    "dead",          "done_prefix",
      "counts", "stats",    "ready_prefix", "unique_prefix", "order_prefix"};

  std::string jobs, inflight, scheduled, dead, done_prefix, counts, stats, ready_prefix,
      unique_prefix, order_prefix;

  static FailKeys of(const redis::Keys& k, int shard) {
    return {k.jobs_prefix(shard),   k.inflight(shard),    k.scheduled(shard), k.dead(shard),
            k.done_prefix(shard),   k.counts(shard),      k.stats(shard),     k.ready_prefix(shard),
            k.unique_prefix(shard), k.order_prefix(shard)};
  }
  // In the scripts' KEYS order.
  std::vector<std::string> list() && {
    return {std::move(jobs),        std::move(inflight),     std::move(scheduled),
            std::move(dead),        std::move(done_prefix),  std::move(counts),
            std::move(stats),       std::move(ready_prefix), std::move(unique_prefix),
            std::move(order_prefix)};
  }
};

inline std::string jitter_arg(double jitter) {
  return std::to_string(jitter);
}

}  // namespace jq::redis::bindings
