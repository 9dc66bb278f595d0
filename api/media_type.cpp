#include "api/media_type.hpp"

#include <cctype>

namespace jq::api {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// "type/subtype; param=x" -> "type/subtype", trimmed.
std::string_view essence(std::string_view media_range) {
  return trim(media_range.substr(0, media_range.find(';')));
}

// Whether a comma-separated Accept header lists one of `names` (q-values are ignored).
template <class... Names>
bool accept_names(std::string_view accept, Names... names) {
  while (!accept.empty()) {
    const std::size_t comma = accept.find(',');
    const std::string_view range = essence(accept.substr(0, comma));
    if ((iequals(range, names) || ...)) return true;
    if (comma == std::string_view::npos) break;
    accept.remove_prefix(comma + 1);
  }
  return false;
}

constexpr std::string_view kMsgpack = "application/msgpack";
constexpr std::string_view kXMsgpack = "application/x-msgpack";
constexpr std::string_view kJson = "application/json";

}  // namespace

std::optional<MediaType> parse_content_type(std::string_view header) {
  const std::string_view type = essence(header);
  if (iequals(type, kMsgpack) || iequals(type, kXMsgpack)) return MediaType::msgpack;
  if (iequals(type, kJson)) return MediaType::json;
  return std::nullopt;
}

MediaType choose_response_type(std::string_view accept, std::optional<MediaType> request_body) {
  if (accept_names(accept, kJson)) return MediaType::json;
  if (accept_names(accept, kMsgpack, kXMsgpack)) return MediaType::msgpack;
  return request_body == MediaType::json ? MediaType::json : MediaType::msgpack;
}

std::string_view content_type_name(MediaType type) {
  return type == MediaType::json ? kJson : kMsgpack;
}

}  // namespace jq::api
