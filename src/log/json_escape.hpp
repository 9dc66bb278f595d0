// Text from outside (a request's path, a worker's error message) made safe for one log line.
#pragma once

#include <string>
#include <string_view>

namespace jq::log {

// Appends `s` as a JSON string literal (quotes included): control characters escaped, bytes that
// are not UTF-8 replaced by U+FFFD, so the line stays one valid JSON object.
void append_json_string(std::string& out, std::string_view s);

// Appends `s` for a text log line: control characters, backslashes and bytes that are not UTF-8
// as \xNN, so no line break or stray byte of a client can forge or garble a line.
void append_log_text(std::string& out, std::string_view s);

}  // namespace jq::log
