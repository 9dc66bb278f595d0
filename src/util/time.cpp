#include "src/util/time.hpp"

namespace jq {
namespace {

// Writes `value` as exactly `width` decimal digits.
char* put_digits(char* out, int value, int width) {
  for (int i = width - 1; i >= 0; --i) {
    out[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  return out + width;
}

}  // namespace

// Formatted by hand (days to civil date after Howard Hinnant's algorithm): every dispatch
// writes a deadline, and snprintf with gmtime_r was 4% of the master's instructions.
std::string_view iso8601_utc(std::int64_t epoch_ms, Iso8601Text& text) {
  std::int64_t secs = epoch_ms / 1000;
  int millis = static_cast<int>(epoch_ms % 1000);
  if (millis < 0) {
    millis += 1000;
    --secs;
  }
  std::int64_t days = secs / 86400;
  std::int64_t rem = secs % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  days += 719468;
  const std::int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const std::int64_t doe = days - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const int day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  const int year = static_cast<int>(yoe + era * 400 + (month <= 2 ? 1 : 0));

  char* const buf = text.data();
  char* p = put_digits(buf, year, 4);
  *p++ = '-';
  p = put_digits(p, month, 2);
  *p++ = '-';
  p = put_digits(p, day, 2);
  *p++ = 'T';
  p = put_digits(p, static_cast<int>(rem / 3600), 2);
  *p++ = ':';
  p = put_digits(p, static_cast<int>(rem / 60 % 60), 2);
  *p++ = ':';
  p = put_digits(p, static_cast<int>(rem % 60), 2);
  *p++ = '.';
  p = put_digits(p, millis, 3);
  *p++ = 'Z';
  return std::string_view(buf, static_cast<std::size_t>(p - buf));
}

std::string iso8601_utc(std::int64_t epoch_ms) {
  Iso8601Text text;
  return std::string(iso8601_utc(epoch_ms, text));
}

}  // namespace jq
