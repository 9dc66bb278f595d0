#include "api/timestamp.hpp"

#include <chrono>
#include <optional>

namespace jq::api {

namespace {

constexpr std::size_t kDateTimeBytes = 19;  // YYYY-MM-DDThh:mm:ss
constexpr std::int64_t kMsPerSecond = 1000;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// The `count` decimal digits at `at`, or nullopt when one of them is not a digit.
std::optional<int> digits(std::string_view text, std::size_t at, std::size_t count) {
  int value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (!is_digit(text[i])) return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

struct DateTime {
  int year, month, day, hour, minute, second;
};

// YYYY-MM-DDThh:mm:ss at the start of `text` (which holds at least kDateTimeBytes).
std::optional<DateTime> read_date_time(std::string_view text) {
  if (text[4] != '-' || text[7] != '-' || (text[10] != 'T' && text[10] != 't') || text[13] != ':' ||
      text[16] != ':') {
    return std::nullopt;
  }
  const auto year = digits(text, 0, 4);
  const auto month = digits(text, 5, 2);
  const auto day = digits(text, 8, 2);
  const auto hour = digits(text, 11, 2);
  const auto minute = digits(text, 14, 2);
  const auto second = digits(text, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  return DateTime{*year, *month, *day, *hour, *minute, *second};
}

// Milliseconds to add for the fraction's digits (".250" -> 250, ".0001" -> 1: rounded up).
std::int64_t fraction_ms(std::string_view digits_text) {
  std::int64_t ms = 0;
  bool finer = false;
  for (std::size_t i = 0; i < digits_text.size(); ++i) {
    const int digit = digits_text[i] - '0';
    if (i < 3) {
      ms = ms * 10 + digit;
    } else if (digit != 0) {
      finer = true;
    }
  }
  for (std::size_t i = digits_text.size(); i < 3; ++i) ms *= 10;
  return ms + (finer ? 1 : 0);
}

// The offset east of UTC in seconds: "Z", "z", "+hh:mm" or "-hh:mm", and nothing after it.
std::optional<std::int64_t> read_offset_s(std::string_view text) {
  if (text == "Z" || text == "z") return 0;
  if (text.size() != 6 || (text[0] != '+' && text[0] != '-') || text[3] != ':') {
    return std::nullopt;
  }
  const auto hours = digits(text, 1, 2);
  const auto minutes = digits(text, 4, 2);
  if (!hours || !minutes || *hours > 23 || *minutes > 59) return std::nullopt;
  const std::int64_t seconds = *hours * 3600 + *minutes * 60;
  return text[0] == '-' ? -seconds : seconds;
}

// The date and time as seconds since the epoch, read as UTC; nullopt when the day does not exist.
std::optional<std::int64_t> epoch_seconds(const DateTime& t) {
  const std::chrono::year_month_day date{std::chrono::year{t.year},
                                         std::chrono::month{static_cast<unsigned>(t.month)},
                                         std::chrono::day{static_cast<unsigned>(t.day)}};
  if (!date.ok()) return std::nullopt;
  const std::int64_t days = std::chrono::sys_days{date}.time_since_epoch().count();
  return days * 86400 + t.hour * 3600 + t.minute * 60 + t.second;
}

}  // namespace

Expected<std::int64_t, std::string> parse_timestamp_ms(std::string_view text) {
  if (text.size() > kMaxTimestampBytes) {
    return unexpected("is longer than " + std::to_string(kMaxTimestampBytes) + " bytes");
  }
  const auto t = text.size() >= kDateTimeBytes ? read_date_time(text) : std::nullopt;
  if (!t) {
    return unexpected(std::string("does not start with a date and time as YYYY-MM-DDThh:mm:ss"));
  }
  if (t->hour > 23 || t->minute > 59 || t->second > 60) {
    return unexpected(std::string("names a time of day that does not exist"));
  }
  const auto seconds = epoch_seconds(*t);
  if (!seconds) return unexpected(std::string("names a day that does not exist"));

  std::string_view rest = text.substr(kDateTimeBytes);
  std::int64_t ms = 0;
  if (!rest.empty() && rest.front() == '.') {
    std::size_t end = 1;
    while (end < rest.size() && is_digit(rest[end])) ++end;
    if (end == 1) return unexpected(std::string("has a '.' with no digits after it"));
    ms = fraction_ms(rest.substr(1, end - 1));
    rest.remove_prefix(end);
  }
  if (rest.empty()) return unexpected(std::string("has no offset (add Z for UTC, or +hh:mm)"));
  const auto offset = read_offset_s(rest);
  if (!offset) {
    return unexpected(std::string("has an offset that is not Z, +hh:mm or -hh:mm"));
  }
  return (*seconds - *offset) * kMsPerSecond + ms;
}

}  // namespace jq::api
