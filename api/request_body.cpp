#include "api/request_body.hpp"

#include "api/body.hpp"
#include "api/msgpack_reader.hpp"

namespace jq::api {

Expected<std::string, ApiError> request_msgpack(std::string_view body, MediaType type) {
  if (type == MediaType::json) return json_to_msgpack(body);
  const std::string problem = single_value_problem(body);
  if (!problem.empty()) {
    return unexpected(
        ApiError::make(ErrorCode::bad_request, "body is not valid MessagePack: " + problem));
  }
  return std::string(body);
}

}  // namespace jq::api
