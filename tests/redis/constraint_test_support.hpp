// Shared by the [redis] tests that put jobs under constraints: definitions written as the API
// stores them, jobs that matched them, and the constraints' state keys.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/redis/script_test_support.hpp"

namespace jq::test {

inline std::string packed(const nlohmann::json& value) {
  const std::vector<std::uint8_t> bytes = nlohmann::json::to_msgpack(value);
  return std::string(bytes.begin(), bytes.end());
}

// A definition as the API stores it (api::encode_constraint): only what the scripts read.
inline void define(SyncRedis& r, const redis::Keys& keys, const std::string& name,
                   nlohmann::json limits) {
  limits["name"] = name;
  if (!limits.contains("paused")) limits["paused"] = false;
  r.call({"HSET", keys.constraints(), name, packed(limits)});
}

// A job that matched constraint `name` in key `key` at its push.
inline PushArgs constrained(const std::string& name, const std::string& key) {
  PushArgs job;
  job.constraints = packed(nlohmann::json::array({name, key}));
  return job;
}

// <p>:{c}:<kind>:<name>#<key>: a constraint key's held set, leases or rate state.
inline std::string state_key(const redis::Keys& keys, const std::string& kind,
                             const std::string& name, const std::string& key) {
  return keys.constraint_state_prefix() + kind + ":" + name + "#" + key;
}

inline std::vector<std::string> zmembers(SyncRedis& r, const std::string& key) {
  std::vector<std::string> out;
  for (const redis::Reply& e : r.call({"ZRANGE", key, "0", "-1"}).elements) out.push_back(e.str);
  return out;
}

// The fields of up to `max` jobs of name "email" that reserveJobs starts in shard 0.
inline std::vector<std::string> take(SyncRedis& r, const redis::Keys& keys, int max = 10,
                                     std::int64_t now_ms = kNowMs) {
  redis::Reply taken = reserve_jobs(r, keys, 0, "email", max, now_ms);
  std::vector<std::string> fields;
  for (std::size_t i = 0; i < taken.elements.size(); i += 2) {
    fields.push_back(taken.elements[i].str);
  }
  return fields;
}

// Ends the running job `field` of shard 0 as succeeded.
inline void complete(SyncRedis& r, const redis::Keys& keys, const std::string& field) {
  using redis::bindings::CompleteJobs;
  CompleteJobs::Args args{3600, keys.events_channel(0), 0, kNowMs, {{field, 1, "\xc0"}}};
  auto status = CompleteJobs::decode(
      r.eval(CompleteJobs::call(CompleteJobs::keys(keys, 0), std::move(args))), 1);
  REQUIRE(status);
  REQUIRE(status->front() == CompleteJobs::Status::done);
}

}  // namespace jq::test
