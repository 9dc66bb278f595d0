// A worker's answer to a dispatch: {type: success|failure, ...}, checked before the master
// acts on it.
#pragma once

#include <string>
#include <string_view>

#include "api/media_type.hpp"
#include "common/expected.hpp"

namespace jq::api {

enum class ResultType { success, failure };
enum class FailureReason { other, timeout };

struct JobResult {
  ResultType type = ResultType::success;
  FailureReason reason = FailureReason::other;  // failures only
  bool should_retry = false;                    // failures only
  std::string message;                          // failures only: for people
  std::string encoded;  // the whole result object as MessagePack, exactly as the worker sent it
                        // (JSON answers are converted once)
};

// Validates a worker's 200 body. On error, the string says what was wrong in words for the
// job's last_error ("result.type must be \"success\" or \"failure\"").
Expected<JobResult, std::string> decode_job_result(std::string_view body, MediaType type);

// The failure object the master writes itself (timeouts, bad answers, unreachable workers).
std::string encode_failure(FailureReason reason, bool should_retry, std::string_view message,
                           std::string_view finished_at_iso8601);

}  // namespace jq::api
