// The two calls most end-to-end tests make through the daemon's API: register a jqworker and
// push a job that must be accepted.
#pragma once

#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

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

}  // namespace jq::test
