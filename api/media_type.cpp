#include "api/media_type.hpp"

#include <algorithm>

#include "common/ascii.hpp"

namespace jq::api {

namespace {

// "type/subtype; param=x" -> "type/subtype", trimmed.
std::string_view essence(std::string_view media_range) {
  return trim_ows(media_range.substr(0, media_range.find(';')));
}

// The q-value of a media range's parameters ("; q=0.5; level=1" -> 0.5); 1 when absent, 0 when
// malformed (RFC 9110: 0-1 with at most three decimals; a range we cannot read is not preferred).
double q_value(std::string_view params) {
  while (!params.empty()) {
    const std::size_t semi = params.find(';');
    const std::string_view param = trim_ows(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view{} : params.substr(semi + 1);
    if (param.size() < 2 || ascii_lower(param[0]) != 'q' || param[1] != '=') {
      continue;
    }
    const std::string_view digits = param.substr(2);
    if (digits.empty() || digits.size() > 5 || (digits[0] != '0' && digits[0] != '1')) return 0;
    if (digits.size() > 1 && digits[1] != '.') return 0;
    double q = digits[0] - '0';
    double scale = 0.1;
    for (std::size_t i = 2; i < digits.size(); ++i, scale /= 10) {
      if (digits[i] < '0' || digits[i] > '9') return 0;
      q += (digits[i] - '0') * scale;
    }
    return q > 1 ? 0 : q;
  }
  return 1;
}

// The highest q-value an Accept header gives any of `names`, or -1 when it names none of them.
// Wildcards (*/*, application/*) name no type: they leave the choice to the request body.
template <class... Names>
double accept_q(std::string_view accept, Names... names) {
  double best = -1;
  while (!accept.empty()) {
    const std::size_t comma = accept.find(',');
    const std::string_view range = accept.substr(0, comma);
    const std::size_t semi = range.find(';');
    if ((ascii_iequals(essence(range), names) || ...)) {
      best = std::max(best, semi == std::string_view::npos ? 1.0 : q_value(range.substr(semi + 1)));
    }
    if (comma == std::string_view::npos) break;
    accept.remove_prefix(comma + 1);
  }
  return best;
}

constexpr std::string_view kMsgpack = "application/msgpack";
constexpr std::string_view kXMsgpack = "application/x-msgpack";
constexpr std::string_view kJson = "application/json";

}  // namespace

std::optional<MediaType> parse_content_type(std::string_view header) {
  // The usual headers, as clients write them, without the walk below (every push reads one).
  if (header == kJson) return MediaType::json;
  if (header == kMsgpack) return MediaType::msgpack;
  const std::string_view type = essence(header);
  if (ascii_iequals(type, kMsgpack) || ascii_iequals(type, kXMsgpack)) return MediaType::msgpack;
  if (ascii_iequals(type, kJson)) return MediaType::json;
  return std::nullopt;
}

MediaType choose_response_type(std::string_view accept, std::optional<MediaType> request_body) {
  if (accept == kJson) return MediaType::json;
  if (accept == kMsgpack) return MediaType::msgpack;
  const double msgpack = accept_q(accept, kMsgpack, kXMsgpack);
  const double json = accept_q(accept, kJson);
  if (msgpack > 0 && msgpack >= json) return MediaType::msgpack;
  if (json > 0) return MediaType::json;
  // Named with q=0 ("not acceptable") or not named at all: JSON, unless a MessagePack body with
  // an Accept that names neither type says the client speaks MessagePack.
  if (msgpack < 0 && json < 0 && request_body == MediaType::msgpack) return MediaType::msgpack;
  return MediaType::json;
}

std::string_view content_type_name(MediaType type) {
  return type == MediaType::json ? kJson : kMsgpack;
}

}  // namespace jq::api
