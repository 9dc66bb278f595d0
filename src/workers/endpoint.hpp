// A registered worker endpoint as the master uses it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "api/http_url.hpp"

namespace jq::workers {

struct Endpoint {
  std::string id;
  std::string url;
  api::HttpUrl address;
  std::vector<std::string> names;  // empty when all_names
  bool all_names = false;          // registered for "*"
  int concurrency = 8;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string ca_file;      // https: the CAs its certificate must chain to; empty: the defaults
  std::int64_t ttl_ms = 0;  // 0: no heartbeat needed
  std::int64_t registered_at_ms = 0;
  std::int64_t expires_at_ms = 0;  // 0: never
  std::string secret;              // signs every dispatch; empty: unsigned. Never shown.

  bool serves(const std::string& name) const;
};

// Counters and health shared by all masters (wstats hash and slot leases in Redis).
struct EndpointStats {
  std::int64_t inflight = 0;
  std::int64_t dispatched = 0;
  std::int64_t succeeded = 0;
  std::int64_t failed = 0;
  std::string last_error;
  std::int64_t down_until_ms = 0;  // unreachable: held off until then
  std::int64_t busy_until_ms = 0;  // 429/503: held back until then; 0 once that has passed
  bool healthy = true;             // not held off right now (down_until_ms has passed)
};

struct EndpointView {
  Endpoint endpoint;
  EndpointStats stats;
};

}  // namespace jq::workers
