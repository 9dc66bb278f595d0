#include "src/util/time.hpp"

#include <cstdio>
#include <ctime>

namespace jq {

std::string iso8601_utc(std::int64_t epoch_ms) {
  std::int64_t secs = epoch_ms / 1000;
  int millis = static_cast<int>(epoch_ms % 1000);
  if (millis < 0) {
    millis += 1000;
    --secs;
  }
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
  return buf;
}

}  // namespace jq
