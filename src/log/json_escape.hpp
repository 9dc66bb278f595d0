#pragma once

#include <string>
#include <string_view>

namespace jq::log {

// Appends `s` as a JSON string literal (quotes included); control characters are escaped.
void append_json_string(std::string& out, std::string_view s);

}  // namespace jq::log
