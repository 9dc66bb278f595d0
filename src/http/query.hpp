// Query strings (Boost 1.74 has no Boost.URL): "a=1&b=x%20y" -> values, percent-decoded.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace jq::http {

// The decoded value of the first `name=` in `query`; nullopt when absent or badly encoded.
std::optional<std::string> query_value(std::string_view query, std::string_view name);

// Percent-decoding ('+' is a space in queries only); nullopt on a bad % escape.
std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space);

}  // namespace jq::http
