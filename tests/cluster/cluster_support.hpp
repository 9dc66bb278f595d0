// The cluster tests' shared pieces: one Redis Cluster per test process (starting six nodes takes
// a few seconds), used by the tests that do not break it.
#pragma once

#include "tests/support/redis_cluster.hpp"

namespace jq::test {

inline RedisCluster& shared_cluster() {
  static RedisCluster cluster;
  return cluster;
}

}  // namespace jq::test
