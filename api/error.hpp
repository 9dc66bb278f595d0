// Errors as the user sees them: one code enum, one table to HTTP status and wire name.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace jq::api {

enum class ErrorCode {
  bad_request,             // 400: body is not valid MessagePack/JSON or not the expected shape
  invalid_job,             // 400: a field is wrong
  unauthorized,            // 401
  forbidden,               // 403
  not_found,               // 404
  conflict,                // 409
  payload_too_large,       // 413
  unsupported_media_type,  // 415
  unavailable,             // 503: Redis unreachable or shutting down
  internal,                // 500
};

std::string_view to_string(ErrorCode code);
int http_status(ErrorCode code);

struct ApiError {
  ErrorCode code = ErrorCode::internal;
  std::string message;               // says what was wrong and what to do about it
  std::optional<std::string> field;  // the offending field, where one applies
  std::optional<std::size_t> index;  // the offending job's position in a batch
  std::optional<int> retry_after_s;  // sent as Retry-After (seconds): when to try again

  static ApiError make(ErrorCode code, std::string message) {
    return {code, std::move(message), std::nullopt, std::nullopt, std::nullopt};
  }
};

}  // namespace jq::api
