// Building responses in the encoding the request asked for (the contract's "Encoding").
#pragma once

#include <nlohmann/json.hpp>

#include "api/error.hpp"
#include "api/media_type.hpp"
#include "src/http/message.hpp"

namespace jq::http {

api::MediaType response_type(const Request& request);

Response respond(const Request& request, int status, const nlohmann::json& body);
// A body already encoded as `type` (the request's response_type).
Response respond_encoded(api::MediaType type, int status, std::string body);
Response respond_error(const Request& request, const api::ApiError& error);
Response respond_error(const Request& request, api::ErrorCode code, std::string message);
Response respond_no_content();  // 204

}  // namespace jq::http
