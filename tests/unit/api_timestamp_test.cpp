// A pusher's time (run_at): RFC 3339 with an offset, read strictly, to the millisecond.
#include <catch2/catch.hpp>

#include <cstdio>
#include <ctime>
#include <random>
#include <string>

#include "api/timestamp.hpp"

using jq::api::parse_timestamp_ms;

namespace {

std::int64_t ms(std::string_view text) {
  const auto parsed = parse_timestamp_ms(text);
  if (!parsed) FAIL(text << ": " << parsed.error());
  return *parsed;
}

std::string refused(std::string_view text) {
  const auto parsed = parse_timestamp_ms(text);
  if (parsed) FAIL(text << " was accepted as " << *parsed);
  return parsed.error();
}

}  // namespace

TEST_CASE("RFC 3339 times in UTC are read to the millisecond", "[unit]") {
  CHECK(ms("1970-01-01T00:00:00Z") == 0);
  CHECK(ms("2026-12-01T09:00:00Z") == 1796115600000);
  CHECK(ms("2000-02-29T23:59:59.999Z") == 951868799999);  // a leap day
  CHECK(ms("1969-12-31T23:59:59Z") == -1000);
  CHECK(ms("0000-01-01T00:00:00Z") == -62167219200000);
  CHECK(ms("9999-12-31T23:59:59.999Z") == 253402300799999);
  CHECK(ms("2026-12-01t09:00:00z") == 1796115600000);  // RFC 3339 allows lower case
}

TEST_CASE("an offset moves the time to UTC", "[unit]") {
  const std::int64_t nine_utc = 1796115600000;
  CHECK(ms("2026-12-01T11:00:00+02:00") == nine_utc);
  CHECK(ms("2026-12-01T03:30:00-05:30") == nine_utc);
  CHECK(ms("2026-12-01T09:00:00+00:00") == nine_utc);
  CHECK(ms("2026-12-01T09:00:00-00:00") == nine_utc);  // "offset unknown": UTC
  CHECK(ms("2026-12-02T08:59:00+23:59") == nine_utc);
  CHECK(ms("2026-11-30T09:01:00-23:59") == nine_utc);
  CHECK(ms("2027-01-01T00:30:00+01:00") == ms("2026-12-31T23:30:00Z"));  // across a year
}

TEST_CASE("fractions of a second round up to the next millisecond", "[unit]") {
  CHECK(ms("1970-01-01T00:00:00.5Z") == 500);
  CHECK(ms("1970-01-01T00:00:00.25Z") == 250);
  CHECK(ms("1970-01-01T00:00:00.250Z") == 250);
  CHECK(ms("1970-01-01T00:00:00.2500000Z") == 250);
  CHECK(ms("1970-01-01T00:00:00.0001Z") == 1);
  CHECK(ms("1970-01-01T00:00:00.123456789Z") == 124);
  CHECK(ms("1970-01-01T00:00:00.000000000000000000001Z") == 1);
  CHECK(ms("1970-01-01T00:00:00.999999+00:00") == 1000);
  CHECK(ms("1969-12-31T23:59:59.9991Z") == 0);
}

TEST_CASE("a leap second is the instant after the 59th second", "[unit]") {
  CHECK(ms("2016-12-31T23:59:60Z") == ms("2017-01-01T00:00:00Z"));
  CHECK(ms("2016-12-31T23:59:60.5Z") == ms("2017-01-01T00:00:00.5Z"));
}

TEST_CASE("a time without an offset is refused, not guessed", "[unit]") {
  for (const char* text : {"2026-12-01T09:00:00", "2026-12-01T09:00:00.5"}) {
    CHECK(refused(text) == "has no offset (add Z for UTC, or +hh:mm)");
  }
}

TEST_CASE("offsets other than Z, +hh:mm and -hh:mm are refused", "[unit]") {
  for (const char* text :
       {"2026-12-01T09:00:00+0200", "2026-12-01T09:00:00+02", "2026-12-01T09:00:00+2:00",
        "2026-12-01T09:00:00+24:00", "2026-12-01T09:00:00+02:60", "2026-12-01T09:00:00 +02:00",
        "2026-12-01T09:00:00UTC", "2026-12-01T09:00:00GMT", "2026-12-01T09:00:00ZZ",
        "2026-12-01T09:00:00Z ", "2026-12-01T09:00:00+02:00 ", "2026-12-01T09:00:00*02:00",
        "2026-12-01T09:00:00+0a:00", "2026-12-01T09:00:00Europe/Berlin"}) {
    INFO(text);
    CHECK(refused(text) == "has an offset that is not Z, +hh:mm or -hh:mm");
  }
}

TEST_CASE("dates and times that do not exist are refused", "[unit]") {
  for (const char* text :
       {"2026-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z",
        "2026-04-31T00:00:00Z", "2026-12-00T00:00:00Z", "1900-02-29T00:00:00Z"}) {
    INFO(text);
    CHECK(refused(text) == "names a day that does not exist");
  }
  for (const char* text :
       {"2026-12-01T24:00:00Z", "2026-12-01T09:60:00Z", "2026-12-01T09:00:61Z"}) {
    INFO(text);
    CHECK(refused(text) == "names a time of day that does not exist");
  }
}

TEST_CASE("other shapes of ISO 8601 and free text are refused", "[unit]") {
  for (const char* text :
       {"", "2026-12-01", "2026-12-01Z", "2026-12-01 09:00:00Z", "20261201T090000Z",
        "2026-12-01T09:00Z", "2026-W48-2T09:00:00Z", "2026-335T09:00:00Z", "26-12-01T09:00:00Z",
        "+2026-12-01T09:00:00Z", "02026-12-01T09:00:00Z", "2026-12-1T09:00:00Z",
        "2026-12-01T9:00:00Z", "2026/12/01T09:00:00Z", " 2026-12-01T09:00:00Z", "tomorrow",
        "1796115600", "2026-12-01T09:00:0aZ", "2026-12-01T09:00:-1Z"}) {
    INFO(text);
    CHECK(refused(text) == "does not start with a date and time as YYYY-MM-DDThh:mm:ss");
  }
  CHECK(refused("2026-12-01T09:00:00.Z") == "has a '.' with no digits after it");
  CHECK(refused("2026-12-01T09:00:00,5Z") == "has an offset that is not Z, +hh:mm or -hh:mm");
}

TEST_CASE("a time longer than 64 bytes is refused before it is read", "[unit]") {
  const std::string fraction(64 - 21, '0');
  CHECK(ms("1970-01-01T00:00:00." + fraction + "Z") == 0);  // 64 bytes
  CHECK(refused("1970-01-01T00:00:00." + fraction + "0Z") == "is longer than 64 bytes");
}

TEST_CASE("timestamps agree with timegm over four centuries", "[unit]") {
  std::mt19937_64 rng(20261201);
  std::uniform_int_distribution<std::int64_t> seconds(-2208988800, 10'000'000'000);  // 1900-2286
  std::uniform_int_distribution<int> offset_minutes(-23 * 60 - 59, 23 * 60 + 59);
  for (int i = 0; i < 20000; ++i) {
    const std::int64_t utc = seconds(rng);
    const int offset = offset_minutes(rng);
    const std::time_t local = static_cast<std::time_t>(utc + offset * 60);
    std::tm tm{};
    REQUIRE(gmtime_r(&local, &tm) != nullptr);
    char text[96];  // room for any int in each field, as the compiler checks
    const int a = offset < 0 ? -offset : offset;
    std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  offset < 0 ? '-' : '+', a / 60, a % 60);
    INFO(text);
    REQUIRE(ms(text) == utc * 1000);
  }
}
