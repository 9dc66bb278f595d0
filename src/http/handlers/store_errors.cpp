#include "src/http/handlers/store_errors.hpp"

namespace jq::http {
namespace {

// Retry-After of a 503 the store caused. Redis away (a reconnect takes tens of milliseconds to
// a few seconds) or busy: soon. Out of memory lasts until someone frees memory or the workers
// drain the queues, so clients that honour Retry-After should not hammer it meanwhile.
constexpr int kUnavailableRetryAfterS = 1;
constexpr int kOutOfMemoryRetryAfterS = 5;

}  // namespace

api::ApiError to_api_error(const store::StoreError& error) {
  api::ErrorCode code = api::ErrorCode::internal;
  std::optional<int> retry_after_s;
  switch (error.code) {
    case store::StoreErrc::not_found:
      code = api::ErrorCode::not_found;
      break;
    case store::StoreErrc::conflict:
      code = api::ErrorCode::conflict;
      break;
    case store::StoreErrc::unavailable:
      code = api::ErrorCode::unavailable;
      retry_after_s = kUnavailableRetryAfterS;
      break;
    case store::StoreErrc::out_of_memory:
      code = api::ErrorCode::unavailable;
      retry_after_s = kOutOfMemoryRetryAfterS;
      break;
    case store::StoreErrc::internal:
      code = api::ErrorCode::internal;
      break;
  }
  api::ApiError out = api::ApiError::make(code, error.message);
  out.retry_after_s = retry_after_s;
  return out;
}

}  // namespace jq::http
