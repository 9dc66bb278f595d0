// Timestamps in responses and worker requests: ISO 8601 UTC with milliseconds.
#include <catch2/catch.hpp>

#include <cstdio>
#include <ctime>
#include <random>

#include "src/util/time.hpp"

namespace {

// The C library's answer, for comparison.
std::string reference(std::int64_t epoch_ms) {
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

}  // namespace

TEST_CASE("iso8601_utc writes known instants exactly", "[unit]") {
  CHECK(jq::iso8601_utc(0) == "1970-01-01T00:00:00.000Z");
  CHECK(jq::iso8601_utc(1700000000123) == "2023-11-14T22:13:20.123Z");
  CHECK(jq::iso8601_utc(951782400000) == "2000-02-29T00:00:00.000Z");  // a leap day
  CHECK(jq::iso8601_utc(-1) == "1969-12-31T23:59:59.999Z");
  CHECK(jq::iso8601_utc(253402300799999) == "9999-12-31T23:59:59.999Z");
}

TEST_CASE("iso8601_utc agrees with gmtime over four centuries", "[unit]") {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<std::int64_t> ms(-2208988800000, 253402300799999);  // 1900-9999
  for (int i = 0; i < 20000; ++i) {
    const std::int64_t t = ms(rng);
    REQUIRE(jq::iso8601_utc(t) == reference(t));
  }
}
