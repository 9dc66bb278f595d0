// The one table from store errors to the contract's error codes.
#pragma once

#include "api/error.hpp"
#include "src/store/store_error.hpp"

namespace jq::http {

api::ApiError to_api_error(const store::StoreError& error);

}  // namespace jq::http
