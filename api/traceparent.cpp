#include "api/traceparent.hpp"

#include <algorithm>
#include <cstddef>

namespace jq::api {
namespace {

constexpr std::size_t kTraceIdHex = 32;
constexpr std::size_t kParentIdHex = 16;
constexpr std::size_t kFlagsHex = 2;
constexpr std::string_view kVersion = "00";

bool is_lower_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

// Takes `width` lower-case hex digits and the '-' after them (none after the last field) off
// the front of `text`; returns the digits, or an empty view when they are not there.
std::string_view take_field(std::string_view& text, std::size_t width, bool last) {
  const std::size_t need = width + (last ? 0 : 1);
  if (text.size() < need || (!last && text[width] != '-')) return {};
  const std::string_view digits = text.substr(0, width);
  if (!std::all_of(digits.begin(), digits.end(), is_lower_hex)) return {};
  text.remove_prefix(need);
  return digits;
}

bool all_zeros(std::string_view digits) {
  return std::all_of(digits.begin(), digits.end(), [](char c) { return c == '0'; });
}

}  // namespace

bool is_valid_traceparent(std::string_view header) {
  std::string_view rest = header;
  const std::string_view version = take_field(rest, kVersion.size(), false);
  const std::string_view trace_id = take_field(rest, kTraceIdHex, false);
  const std::string_view parent_id = take_field(rest, kParentIdHex, false);
  const std::string_view flags = take_field(rest, kFlagsHex, true);
  return version == kVersion && !trace_id.empty() && !parent_id.empty() && !flags.empty() &&
         rest.empty() && !all_zeros(trace_id) && !all_zeros(parent_id);
}

}  // namespace jq::api
