// Single-value parsers shared by the YAML file, the JQ_* environment and the flags, so a value
// is checked the same way wherever it comes from. `key` names the source in errors: a dotted
// config path ("redis.url"), an environment variable ("JQ_REDIS_URL") or a flag ("--redis-url").
#pragma once

#include <string>
#include <string_view>

#include "src/config/config.hpp"

namespace jq::config::detail {

// `text` in double quotes with quotes, backslashes and control characters escaped; long texts
// are cut short with "...". For the ", got <value>" part of a message.
std::string quote(std::string_view text);

// "config: <key>: <problem>, got <quote(text)>".
[[noreturn]] void fail_value(const std::string& key, std::string_view problem,
                             std::string_view text);

ListenAddress listen_from(const std::string& key, std::string_view text);
LogLevel log_level_from(const std::string& key, std::string_view text);
LogFormat log_format_from(const std::string& key, std::string_view text);
Role role_from(const std::string& key, std::string_view text);
std::string redis_url_from(const std::string& key, std::string_view text);  // "" allowed

}  // namespace jq::config::detail
