// Enum names, redis.url and message quoting. Each enum's names live in one array indexed by the
// enum's value, so to_string and parsing cannot disagree.
#include "src/config/values.hpp"

#include <array>
#include <cstddef>
#include <cstdio>

namespace jq::config {
namespace {

constexpr std::array<std::string_view, 5> kLogLevelNames{"trace", "debug", "info", "warn", "error"};
constexpr std::array<std::string_view, 2> kLogFormatNames{"text", "json"};
constexpr std::array<std::string_view, 3> kRoleNames{"push", "worker", "admin"};

constexpr std::size_t kMaxQuotedChars = 80;

template <class E, std::size_t N>
E enum_from(const std::array<std::string_view, N>& names, const std::string& key,
            std::string_view text) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == text) return static_cast<E>(i);
  }
  std::string problem = "must be one of";
  for (std::size_t i = 0; i < N; ++i) {
    problem += i == 0 ? " " : (i + 1 == N ? " or " : ", ");
    problem += names[i];
  }
  detail::fail_value(key, problem, text);
}

void append_escaped(std::string& out, char c) {
  switch (c) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\t':
      out += "\\t";
      return;
    case '\r':
      out += "\\r";
      return;
  }
  if (static_cast<unsigned char>(c) < 0x20) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
    out += buf;
    return;
  }
  out += c;
}

}  // namespace

std::string_view to_string(LogLevel level) {
  return kLogLevelNames.at(static_cast<int>(level));
}
std::string_view to_string(LogFormat format) {
  return kLogFormatNames.at(static_cast<int>(format));
}
std::string_view to_string(Role role) {
  return kRoleNames.at(static_cast<int>(role));
}

LogLevel parse_log_level(const std::string& text) {
  return detail::log_level_from("log.level", text);
}

namespace detail {

std::string quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text.substr(0, kMaxQuotedChars)) append_escaped(out, c);
  out += text.size() > kMaxQuotedChars ? "...\"" : "\"";
  return out;
}

void fail_value(const std::string& key, std::string_view problem, std::string_view text) {
  throw ConfigError(key, std::string(problem) + ", got " + quote(text));
}

LogLevel log_level_from(const std::string& key, std::string_view text) {
  return enum_from<LogLevel>(kLogLevelNames, key, text);
}

LogFormat log_format_from(const std::string& key, std::string_view text) {
  return enum_from<LogFormat>(kLogFormatNames, key, text);
}

Role role_from(const std::string& key, std::string_view text) {
  return enum_from<Role>(kRoleNames, key, text);
}

std::string redis_url_from(const std::string& key, std::string_view text) {
  constexpr std::array<std::string_view, 3> kSchemes{"redis://", "unix://", "redis+cluster://"};
  if (text.empty()) return {};
  for (std::string_view scheme : kSchemes) {
    if (text.starts_with(scheme) && text.size() > scheme.size()) return std::string(text);
  }
  fail_value(key,
             "must be empty (start an embedded redis-server), redis://host:port/db, "
             "unix:///path/to/redis.sock or redis+cluster://host:port[,host:port...] (Redis "
             "Cluster seed nodes)",
             text);
}

}  // namespace detail
}  // namespace jq::config
