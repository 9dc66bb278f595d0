#include "src/http/handlers/store_errors.hpp"

namespace jq::http {

api::ApiError to_api_error(const store::StoreError& error) {
  api::ErrorCode code = api::ErrorCode::internal;
  switch (error.code) {
    case store::StoreErrc::not_found:
      code = api::ErrorCode::not_found;
      break;
    case store::StoreErrc::conflict:
      code = api::ErrorCode::conflict;
      break;
    case store::StoreErrc::unavailable:
      code = api::ErrorCode::unavailable;
      break;
    case store::StoreErrc::internal:
      code = api::ErrorCode::internal;
      break;
  }
  return api::ApiError::make(code, error.message);
}

}  // namespace jq::http
