// The first step of decoding any request body: one MessagePack value, whatever the encoding.
#pragma once

#include <string>
#include <string_view>

#include "api/error.hpp"
#include "api/media_type.hpp"
#include "common/expected.hpp"

namespace jq::api {

// JSON bodies are converted (once) to MessagePack; MessagePack bodies are checked to hold
// exactly one well-formed value. Either way the decoders that follow read MessagePack only, so
// validation is written once. bad_request: "body is not valid MessagePack: ..." / "...JSON: ...".
Expected<std::string, ApiError> request_msgpack(std::string_view body, MediaType type);

}  // namespace jq::api
