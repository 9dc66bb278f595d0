// The contract's "Encoding" rules: which request bodies we read and which responses we write.
#pragma once

#include <optional>
#include <string_view>

namespace jq::api {

enum class MediaType { msgpack, json };

// "application/msgpack", "application/x-msgpack" (parameters such as "; charset=" ignored,
// case-insensitive) -> msgpack; "application/json" -> json; anything else -> nullopt (415).
std::optional<MediaType> parse_content_type(std::string_view header);

// MessagePack when Accept names application/msgpack or application/x-msgpack with a q-value
// above 0 and not below application/json's, or when Accept names neither type and the request
// body was MessagePack; JSON otherwise (so curl, browsers and generated clients that send no
// Accept, or */*, get JSON).
MediaType choose_response_type(std::string_view accept, std::optional<MediaType> request_body);

std::string_view content_type_name(MediaType type);  // "application/msgpack" | "application/json"

}  // namespace jq::api
