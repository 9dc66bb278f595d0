// The two calls most end-to-end tests make through the daemon's API: register a jqworker and
// push a job that must be accepted.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "src/store/job_routing.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/worker.hpp"

namespace jq::test {

inline void register_worker(const HttpClient& http, const Worker& worker, nlohmann::json names,
                            int concurrency) {
  auto res =
      http.post("/v1/workers",
                {{"url", worker.url()}, {"names", std::move(names)}, {"concurrency", concurrency}});
  REQUIRE((res.status == 201 || res.status == 200));
}

// Pushes one job and returns its id; anything but 201 fails the test.
inline std::string push(const HttpClient& http, const nlohmann::json& job) {
  auto res = http.post("/v1/jobs", job);
  REQUIRE(res.status == 201);
  return res.value()["id"];
}

// `n` keys (unique or ordering keys) that route jobs to `n` different shards of `shards`.
inline std::vector<std::string> keys_in_different_shards(int n, int shards) {
  std::vector<std::string> keys;
  std::vector<int> taken;
  for (int i = 0; static_cast<int>(keys.size()) < n; ++i) {
    const std::string key = "key-" + std::to_string(i);
    const int shard = jq::store::hashed_shard(key, shards);
    if (std::find(taken.begin(), taken.end(), shard) != taken.end()) continue;
    taken.push_back(shard);
    keys.push_back(key);
  }
  return keys;
}

}  // namespace jq::test
