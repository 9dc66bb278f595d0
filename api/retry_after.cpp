#include "api/retry_after.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>

namespace jq::api {
namespace {

using std::chrono::milliseconds;
constexpr milliseconds kLongest = std::chrono::hours(24 * 365);

std::optional<int> number(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// IMF-fixdate, the form RFC 9110 says to send: "Sun, 06 Nov 1994 08:49:37 GMT" (29 bytes).
// In seconds: a system_clock time point counts nanoseconds and overflows past 2262.
std::optional<std::chrono::sys_seconds> imf_fixdate(std::string_view v) {
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (v.size() != 29 || v.substr(3, 2) != ", " || v[7] != ' ' || v[11] != ' ' || v[16] != ' ' ||
      v[19] != ':' || v[22] != ':' || v.substr(25) != " GMT") {
    return std::nullopt;
  }
  const auto month = std::find(kMonths.begin(), kMonths.end(), v.substr(8, 3));
  const auto day = number(v.substr(5, 2));
  const auto year = number(v.substr(12, 4));
  const auto hour = number(v.substr(17, 2));
  const auto minute = number(v.substr(20, 2));
  const auto second = number(v.substr(23, 2));
  if (month == kMonths.end() || !day || !year || !hour || !minute || !second || *hour > 23 ||
      *minute > 59 || *second > 60) {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{
      std::chrono::year{*year},
      std::chrono::month{static_cast<unsigned>(month - kMonths.begin() + 1)},
      std::chrono::day{static_cast<unsigned>(*day)}};
  if (!date.ok()) return std::nullopt;
  return std::chrono::sys_days{date} + std::chrono::hours(*hour) + std::chrono::minutes(*minute) +
         std::chrono::seconds(*second);
}

}  // namespace

std::optional<milliseconds> parse_retry_after(std::string_view value,
                                              std::chrono::system_clock::time_point now) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  if (value.find_first_not_of("0123456789") == std::string_view::npos) {
    std::uint64_t seconds = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (ec == std::errc::result_out_of_range) return kLongest;
    if (ec != std::errc{} || end != value.data() + value.size()) return std::nullopt;
    return std::min<milliseconds>(
        kLongest, std::chrono::seconds(std::min<std::uint64_t>(seconds, 365ULL * 24 * 3600)));
  }
  const auto at = imf_fixdate(value);
  if (!at) return std::nullopt;
  const auto ahead = *at - std::chrono::time_point_cast<std::chrono::seconds>(now);
  if (ahead <= std::chrono::seconds(0)) return milliseconds(0);
  return std::min<milliseconds>(kLongest, ahead);
}

}  // namespace jq::api
