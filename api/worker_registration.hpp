// POST /v1/workers bodies: a worker endpoint and the job names it serves.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/error.hpp"
#include "api/media_type.hpp"
#include "common/expected.hpp"

namespace jq::api {

inline constexpr std::size_t kMaxWorkerNames = 1000;
inline constexpr int kMaxWorkerConcurrency = 10000;
inline constexpr int kDefaultWorkerConcurrency = 8;
inline constexpr std::size_t kMaxWorkerUrlBytes = 2048;
inline constexpr std::size_t kMaxWorkerHeaders = 64;
inline constexpr std::size_t kMaxWorkerHeaderValueBytes = 8192;
inline constexpr double kMaxWorkerTtlSeconds = 86400.0 * 365;

struct WorkerRegistration {
  std::string url;                              // absolute http:// URL
  std::vector<std::string> names;               // job names, or exactly {"*"} for every name
  int concurrency = kDefaultWorkerConcurrency;  // 1-10000
  std::vector<std::pair<std::string, std::string>> headers;  // sent with every dispatch
  std::optional<std::chrono::milliseconds> ttl;              // heartbeat period; absent = forever
};

// Errors: bad_request (not a map), invalid_job with `field` (unknown key, bad url, bad name...).
// Duplicate names are dropped (first occurrence kept). Header names may not be ones the master
// sets itself (Host, Content-Type, Content-Length, X-Jq-Job-Id, X-Jq-Attempt), nor repeat.
Expected<WorkerRegistration, ApiError> decode_worker_registration(std::string_view body,
                                                                  MediaType type);

}  // namespace jq::api
