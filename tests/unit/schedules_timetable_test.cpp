// When schedules tick: the calendar rules and the contract's daylight-saving rules, in zones
// whose changes are an hour (Berlin, New York) and half an hour (Lord Howe Island).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "api/cron.hpp"
#include "api/time_zone.hpp"
#include "api/timestamp.hpp"
#include "src/schedules/timetable.hpp"

using jq::schedules::format_in_zone;
using jq::schedules::Timetable;

namespace {

const date::time_zone* zone(std::string_view name) {
  auto z = jq::api::find_time_zone(name);
  REQUIRE(z);
  return *z;
}

std::int64_t at(std::string_view rfc3339) {
  auto ms = jq::api::parse_timestamp_ms(rfc3339);
  REQUIRE(ms);
  return *ms;
}

Timetable cron(std::string_view expression, std::string_view zone_name) {
  auto spec = jq::api::parse_cron(expression);
  REQUIRE(spec);
  return Timetable::cron(*spec, zone(zone_name));
}

// The next `count` ticks after `from`, written in the timetable's zone.
std::vector<std::string> ticks(const Timetable& t, std::string_view from, int count) {
  std::vector<std::string> out;
  std::int64_t after = at(from);
  for (int i = 0; i < count; ++i) {
    const auto next = t.next_after(after);
    if (!next) break;
    out.push_back(format_in_zone(*next, t.zone()));
    after = *next;
  }
  return out;
}

using Ticks = std::vector<std::string>;

}  // namespace

TEST_CASE("a daily cron in UTC, strictly after the given instant", "[unit]") {
  const Timetable t = cron("30 2 * * *", "UTC");
  CHECK(ticks(t, "2026-11-25T01:00:00Z", 2) ==
        Ticks{"2026-11-25T02:30:00+00:00", "2026-11-26T02:30:00+00:00"});
  CHECK(ticks(t, "2026-11-25T02:30:00Z", 1) == Ticks{"2026-11-26T02:30:00+00:00"});
  CHECK(ticks(t, "2026-11-25T02:29:59.999Z", 1) == Ticks{"2026-11-25T02:30:00+00:00"});
}

TEST_CASE("29 February comes every four years, day 31 only in long months", "[unit]") {
  CHECK(ticks(cron("0 12 29 2 *", "UTC"), "2026-01-01T00:00:00Z", 2) ==
        Ticks{"2028-02-29T12:00:00+00:00", "2032-02-29T12:00:00+00:00"});
  CHECK(ticks(cron("0 0 31 * *", "UTC"), "2026-01-31T00:00:00Z", 4) ==
        Ticks{"2026-03-31T00:00:00+00:00", "2026-05-31T00:00:00+00:00", "2026-07-31T00:00:00+00:00",
              "2026-08-31T00:00:00+00:00"});
  // 30 February never comes: no tick at all (the API refuses such a timetable, so the spec is
  // made by hand: 30 January moved to February).
  auto never = jq::api::parse_cron("0 0 30 1 *");
  REQUIRE(never);
  never->months.reset();
  never->months.set(2);
  CHECK(ticks(Timetable::cron(*never, zone("UTC")), "2026-01-01T00:00:00Z", 1).empty());
}

TEST_CASE("the two day fields: either when both are restricted, both when one starts with *",
          "[unit]") {
  // The 13th or any Friday, November 2026 (Fridays 6, 13, 20, 27).
  CHECK(ticks(cron("0 9 13 * 5", "UTC"), "2026-11-01T00:00:00Z", 4) ==
        Ticks{"2026-11-06T09:00:00+00:00", "2026-11-13T09:00:00+00:00", "2026-11-20T09:00:00+00:00",
              "2026-11-27T09:00:00+00:00"});
  CHECK(
      ticks(cron("0 9 12 * 5", "UTC"), "2026-11-01T00:00:00Z", 3) ==
      Ticks{"2026-11-06T09:00:00+00:00", "2026-11-12T09:00:00+00:00", "2026-11-13T09:00:00+00:00"});
  // Odd days that are Mondays: */2 starts with * so both must hold (2, 16 and 30 are Mondays
  // in November 2026, even days; 9 and 23 are odd Mondays).
  CHECK(ticks(cron("0 9 */2 * mon", "UTC"), "2026-11-01T00:00:00Z", 2) ==
        Ticks{"2026-11-09T09:00:00+00:00", "2026-11-23T09:00:00+00:00"});
}

TEST_CASE("six fields tick on seconds", "[unit]") {
  CHECK(
      ticks(cron("*/20 * * * * *", "UTC"), "2026-11-25T10:00:50Z", 3) ==
      Ticks{"2026-11-25T10:01:00+00:00", "2026-11-25T10:01:20+00:00", "2026-11-25T10:01:40+00:00"});
  CHECK(ticks(cron("5 59 23 31 12 *", "UTC"), "2026-06-01T00:00:00Z", 1) ==
        Ticks{"2026-12-31T23:59:05+00:00"});
}

TEST_CASE("Berlin, spring forward: a fixed time in the gap runs once right after it", "[unit]") {
  // 2026-03-29 02:00 CET becomes 03:00 CEST.
  CHECK(
      ticks(cron("30 2 * * *", "Europe/Berlin"), "2026-03-28T00:00:00Z", 3) ==
      Ticks{"2026-03-28T02:30:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"});
  // Four times in the gap, one run; the 03:00 of the same list is that same instant.
  CHECK(ticks(cron("0,15,30,45 2,3 29 3 *", "Europe/Berlin"), "2026-03-29T00:00:00Z", 5) ==
        Ticks{"2026-03-29T03:00:00+02:00", "2026-03-29T03:15:00+02:00", "2026-03-29T03:30:00+02:00",
              "2026-03-29T03:45:00+02:00", "2027-03-29T02:00:00+02:00"});
}

TEST_CASE("Berlin, fall back: a fixed time in the repeated hour runs once, at its first occurrence",
          "[unit]") {
  // 2026-10-25 03:00 CEST becomes 02:00 CET.
  CHECK(
      ticks(cron("30 2 * * *", "Europe/Berlin"), "2026-10-24T12:00:00Z", 3) ==
      Ticks{"2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00", "2026-10-27T02:30:00+01:00"});
  // Asked from inside the second 02:xx, the first 02:30 has passed: tomorrow.
  CHECK(ticks(cron("30 2 * * *", "Europe/Berlin"), "2026-10-25T01:10:00Z", 1) ==
        Ticks{"2026-10-26T02:30:00+01:00"});
  // A weekly job never runs twice an hour apart (Bull #2207).
  CHECK(ticks(cron("30 2 * * sun", "Europe/Berlin"), "2026-10-20T00:00:00Z", 2) ==
        Ticks{"2026-10-25T02:30:00+02:00", "2026-11-01T02:30:00+01:00"});
}

TEST_CASE("Berlin: */15 and hourly follow the clock through both changes", "[unit]") {
  // Spring: 01:45 CET is followed 15 real minutes later by 03:00 CEST.
  CHECK(
      ticks(cron("*/15 * * * *", "Europe/Berlin"), "2026-03-29T00:40:00Z", 3) ==
      Ticks{"2026-03-29T01:45:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-29T03:15:00+02:00"});
  // Autumn: the repeated hour's readings run twice, 15 real minutes apart throughout.
  const Ticks autumn = ticks(cron("*/15 * * * *", "Europe/Berlin"), "2026-10-24T23:50:00Z", 10);
  CHECK(autumn == Ticks{"2026-10-25T02:00:00+02:00", "2026-10-25T02:15:00+02:00",
                        "2026-10-25T02:30:00+02:00", "2026-10-25T02:45:00+02:00",
                        "2026-10-25T02:00:00+01:00", "2026-10-25T02:15:00+01:00",
                        "2026-10-25T02:30:00+01:00", "2026-10-25T02:45:00+01:00",
                        "2026-10-25T03:00:00+01:00", "2026-10-25T03:15:00+01:00"});
  CHECK(
      ticks(cron("30 * * * *", "Europe/Berlin"), "2026-10-25T00:00:00Z", 3) ==
      Ticks{"2026-10-25T02:30:00+02:00", "2026-10-25T02:30:00+01:00", "2026-10-25T03:30:00+01:00"});
  CHECK(ticks(cron("@hourly", "Europe/Berlin"), "2026-03-29T00:30:00Z", 2) ==
        Ticks{"2026-03-29T03:00:00+02:00", "2026-03-29T04:00:00+02:00"});
}

TEST_CASE("New York: the same rules an hour later in the night", "[unit]") {
  // 2026-03-08 02:00 EST becomes 03:00 EDT; 2026-11-01 02:00 EDT becomes 01:00 EST.
  CHECK(
      ticks(cron("30 2 * * *", "America/New_York"), "2026-03-07T12:00:00Z", 3) ==
      Ticks{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00"});
  CHECK(ticks(cron("30 1 * * *", "America/New_York"), "2026-10-31T12:00:00Z", 2) ==
        Ticks{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"});
}

TEST_CASE("Lord Howe Island: a half-hour change", "[unit]") {
  // 2026-04-05 02:00 +11:00 becomes 01:30 +10:30; 2026-10-04 02:00 +10:30 becomes 02:30 +11:00.
  CHECK(ticks(cron("45 1 * * *", "Australia/Lord_Howe"), "2026-04-04T00:00:00Z", 2) ==
        Ticks{"2026-04-05T01:45:00+11:00", "2026-04-06T01:45:00+10:30"});
  CHECK(ticks(cron("15 2 * * *", "Australia/Lord_Howe"), "2026-10-03T00:00:00Z", 2) ==
        Ticks{"2026-10-04T02:30:00+11:00", "2026-10-05T02:15:00+11:00"});
  CHECK(ticks(cron("*/20 * * * *", "Australia/Lord_Howe"), "2026-04-04T14:30:00Z", 4) ==
        Ticks{"2026-04-05T01:40:00+11:00", "2026-04-05T01:40:00+10:30", "2026-04-05T02:00:00+10:30",
              "2026-04-05T02:20:00+10:30"});
}

TEST_CASE("every N seconds counts real time from its anchor", "[unit]") {
  const Timetable t = Timetable::every(300'000, at("2026-10-25T00:50:00Z"));
  CHECK(*t.next_after(at("2026-10-25T00:00:00Z")) == at("2026-10-25T00:50:00Z"));
  CHECK(*t.next_after(at("2026-10-25T00:50:00Z")) == at("2026-10-25T00:55:00Z"));
  CHECK(*t.next_after(at("2026-10-25T00:57:30Z")) == at("2026-10-25T01:00:00Z"));
}

TEST_CASE("instants are written with the zone's offset and milliseconds when there are any",
          "[unit]") {
  CHECK(format_in_zone(at("2026-03-29T01:00:00Z"), zone("Europe/Berlin")) ==
        "2026-03-29T03:00:00+02:00");
  CHECK(format_in_zone(at("2026-01-01T00:00:00.250Z"), zone("America/St_Johns")) ==
        "2025-12-31T20:30:00.250-03:30");
  CHECK(format_in_zone(0, zone("UTC")) == "1970-01-01T00:00:00+00:00");
}
