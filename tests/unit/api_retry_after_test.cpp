// A worker's Retry-After: seconds or an HTTP-date, read the same way however large.
#include <catch2/catch.hpp>

#include "api/retry_after.hpp"

using jq::api::parse_retry_after;
using namespace std::chrono_literals;

namespace {

// Wed, 25 Nov 2026 10:30:00 GMT
const auto kNow = std::chrono::system_clock::time_point(std::chrono::seconds(1795602600));

}  // namespace

TEST_CASE("Retry-After in seconds is read as seconds", "[unit]") {
  CHECK(parse_retry_after("0", kNow) == 0ms);
  CHECK(parse_retry_after("120", kNow) == 120s);
  CHECK(parse_retry_after(" 5 ", kNow) == 5s);
  // Far beyond what the master waits (dispatch.max_busy_pause caps it): no overflow.
  CHECK(parse_retry_after("999999", kNow) == 999999s);
  CHECK(parse_retry_after("99999999999999999999999", kNow) == std::chrono::hours(24 * 365));
}

TEST_CASE("Retry-After as an HTTP-date is the time until then", "[unit]") {
  CHECK(parse_retry_after("Wed, 25 Nov 2026 10:31:30 GMT", kNow) == 90s);
  CHECK(parse_retry_after("Wed, 25 Nov 2026 10:29:00 GMT", kNow) == 0ms);  // past: at once
  CHECK(parse_retry_after("Thu, 26 Nov 2026 10:30:00 GMT", kNow) == 24h);
  CHECK(parse_retry_after("Sun, 29 Feb 2032 00:00:00 GMT", kNow).has_value());
}

TEST_CASE("a Retry-After that is neither form is ignored", "[unit]") {
  for (const char* bad : {"", "  ", "-1", "1.5", "soon", "0x10", "Wed, 25 Nov 2026 10:31:30",
                          "Wed, 31 Nov 2026 10:31:30 GMT", "Wed, 25 Foo 2026 10:31:30 GMT",
                          "Wed, 25 Nov 2026 24:00:00 GMT", "Wednesday, 25-Nov-26 10:31:30 GMT"}) {
    INFO("Retry-After: " << bad);
    CHECK_FALSE(parse_retry_after(bad, kNow));
  }
}

// Found by tests/fuzz/fuzz_query: a date past 2262 overflowed the nanosecond time point.
TEST_CASE("a Retry-After date centuries ahead is a year at most", "[unit]") {
  CHECK(parse_retry_after("Wed, 25 Nov 3027 10:31:30 GMT", kNow) == std::chrono::hours(24 * 365));
  CHECK(parse_retry_after("Mon, 01 Jan 9999 00:00:00 GMT", kNow) == std::chrono::hours(24 * 365));
}
