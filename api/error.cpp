#include "api/error.hpp"

namespace jq::api {

namespace {

struct ErrorInfo {
  std::string_view name;  // the wire's `error` field
  int status;             // the HTTP status
};

// The one table from error code to wire name and HTTP status.
ErrorInfo info(ErrorCode code) {
  switch (code) {
    case ErrorCode::bad_request:
      return {"bad_request", 400};
    case ErrorCode::invalid_job:
      return {"invalid_job", 400};
    case ErrorCode::unauthorized:
      return {"unauthorized", 401};
    case ErrorCode::forbidden:
      return {"forbidden", 403};
    case ErrorCode::not_found:
      return {"not_found", 404};
    case ErrorCode::conflict:
      return {"conflict", 409};
    case ErrorCode::payload_too_large:
      return {"payload_too_large", 413};
    case ErrorCode::unsupported_media_type:
      return {"unsupported_media_type", 415};
    case ErrorCode::unavailable:
      return {"unavailable", 503};
    case ErrorCode::internal:
      break;
  }
  return {"internal", 500};
}

}  // namespace

std::string_view to_string(ErrorCode code) {
  return info(code).name;
}

int http_status(ErrorCode code) {
  return info(code).status;
}

}  // namespace jq::api
