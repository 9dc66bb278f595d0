// Standard base64 (RFC 4648, with padding): how binary values appear in JSON as {"$bin": ...}.
#pragma once

#include <string>
#include <string_view>

namespace jq::api {

std::string base64_encode(std::string_view bytes);

}  // namespace jq::api
