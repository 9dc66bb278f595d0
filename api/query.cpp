#include "api/query.hpp"

#include <charconv>
#include <cmath>

namespace jq::api {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The still-encoded value of the first `name=` in `query` ("" for a bare `name`).
std::optional<std::string_view> raw_query_value(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const auto eq = pair.find('=');
    if (pair.substr(0, eq) != name) continue;
    return eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      int hi = hex_value(text[i + 1]);
      int lo = hex_value(text[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

Expected<std::optional<std::string>, ApiError> query_value(std::string_view query,
                                                           std::string_view name) {
  const auto raw = raw_query_value(query, name);
  if (!raw) return std::optional<std::string>();
  auto decoded = percent_decode(*raw, true);
  if (!decoded) {
    ApiError e =
        ApiError::make(ErrorCode::bad_request, std::string(name) +
                                                   " has a bad percent escape (% must be followed "
                                                   "by two hex digits; send a literal % as %25)");
    e.field = std::string(name);
    return unexpected(std::move(e));
  }
  return std::optional<std::string>(std::move(*decoded));
}

namespace {

// "60", "0.5", "1000": the range as a person writes it.
std::string shown(double value) {
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return ec == std::errc{} ? std::string(text, end) : std::to_string(value);
}

ApiError bad_number(const NumberParam& param, std::string_view text) {
  std::string message = std::string(param.name) + " must be " +
                        (param.integer ? "an integer" : "a number") + " between " +
                        shown(param.min) + " and " + shown(param.max);
  if (!param.unit.empty()) message += " (" + std::string(param.unit) + ")";
  message += ", got \"" + std::string(text) + "\"";
  ApiError e = ApiError::make(ErrorCode::bad_request, std::move(message));
  e.field = std::string(param.name);
  return e;
}

}  // namespace

Expected<double, ApiError> query_number(std::string_view query, const NumberParam& param) {
  const auto raw = raw_query_value(query, param.name);
  if (!raw) return param.fallback;
  const auto text = percent_decode(*raw, true);
  if (!text) return unexpected(bad_number(param, *raw));
  double value = 0;
  const char* first = text->data();
  const char* last = first + text->size();
  // from_chars reads "nan", "inf" and "infinity" too; a query parameter is a plain decimal.
  const bool plain =
      !text->empty() && text->find_first_not_of("0123456789.eE+-") == std::string::npos;
  auto [end, ec] = std::from_chars(first, last, value);
  if (!plain || ec != std::errc{} || end != last || !std::isfinite(value) || value < param.min ||
      value > param.max || (param.integer && std::trunc(value) != value)) {
    return unexpected(bad_number(param, *text));
  }
  return value;
}

}  // namespace jq::api
