// POST /v1/workers bodies: a worker endpoint and the job names it serves.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/error.hpp"
#include "api/media_type.hpp"
#include "src/util/expected.hpp"

namespace jq::api {

inline constexpr std::size_t kMaxWorkerNames = 1000;
inline constexpr int kMaxWorkerConcurrency = 10000;

struct WorkerRegistration {
  std::string url;                 // absolute http:// URL
  std::vector<std::string> names;  // job names, or exactly {"*"} for every name
  int concurrency = 8;             // 1-10000
  std::vector<std::pair<std::string, std::string>> headers;  // sent with every dispatch
  std::optional<std::chrono::milliseconds> ttl;               // heartbeat period; absent = forever
};

// Errors: bad_request (not a map), invalid_job with `field` (unknown key, bad url, bad name...).
Expected<WorkerRegistration, ApiError> decode_worker_registration(std::string_view body,
                                                                  MediaType type);

}  // namespace jq::api
