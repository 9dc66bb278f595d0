// What the direct store tests share: one redis-server for the process, a fresh key prefix per
// test, the harness that runs the stores' coroutines, and jobs to push.
#pragma once

#include <chrono>
#include <string>

#include "api/job.hpp"
#include "src/redis/keys.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/store_harness.hpp"

namespace jq::test {

inline RedisServer& store_redis() {
  static RedisServer server;
  return server;
}

inline redis::Keys fresh_store_keys() {
  static int counter = 0;
  return redis::Keys("s" + std::to_string(++counter));
}

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
