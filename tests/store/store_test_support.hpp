// What the direct store tests share: the harness that runs the stores' coroutines (on
// shared_redis(), with fresh_keys() per test), a start time, and jobs to push.
#pragma once

#include <chrono>
#include <string>

#include "api/job.hpp"
#include "src/redis/keys.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/store_harness.hpp"

namespace jq::test {

// 2026-01-01T00:00:00Z: far from any real due time, so nothing of the daemon's kind runs by
// accident.
inline const std::chrono::system_clock::time_point kEpoch =
    std::chrono::system_clock::time_point(std::chrono::seconds(1767225600));

inline api::NewJob new_job(std::string name, std::int32_t priority = 0) {
  api::NewJob job;
  job.name = std::move(name);
  job.argument = "\xc0";  // nil
  job.priority = priority;
  return job;
}

}  // namespace jq::test
