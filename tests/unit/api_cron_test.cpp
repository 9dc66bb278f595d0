// A schedule's `cron`: Vixie cron's syntax, refused with the part that is wrong.
#include <catch2/catch.hpp>

#include <string>

#include "api/cron.hpp"
#include "api/time_zone.hpp"

using jq::api::CronSpec;
using jq::api::parse_cron;

namespace {

CronSpec parsed(std::string_view text) {
  auto spec = parse_cron(text);
  if (!spec) FAIL(text << ": " << spec.error());
  return *spec;
}

std::string refused(std::string_view text) {
  auto spec = parse_cron(text);
  if (spec) FAIL(text << " was accepted");
  return spec.error();
}

template <std::size_t N>
std::string on(const std::bitset<N>& bits) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i) {
    if (bits[i]) out += (out.empty() ? "" : ",") + std::to_string(i);
  }
  return out;
}

}  // namespace

TEST_CASE("cron fields: numbers, ranges, steps and lists", "[unit]") {
  const CronSpec s = parsed("5,10-12,*/20 2-8/3 1,15 */4 1-5");
  CHECK(on(s.seconds) == "0");
  CHECK(on(s.minutes) == "0,5,10,11,12,20,40");
  CHECK(on(s.hours) == "2,5,8");
  CHECK(on(s.days) == "1,15");
  CHECK(on(s.months) == "1,5,9");
  CHECK(on(s.weekdays) == "1,2,3,4,5");
  CHECK_FALSE(s.any_day_of_month);
  CHECK_FALSE(s.any_day_of_week);
  CHECK_FALSE(s.follows_clock);
}

TEST_CASE("cron: six fields put seconds first", "[unit]") {
  const CronSpec s = parsed("*/15 30 2 * * *");
  CHECK(on(s.seconds) == "0,15,30,45");
  CHECK(on(s.minutes) == "30");
  CHECK(on(s.hours) == "2");
  CHECK(s.any_day_of_month);
  CHECK(s.any_day_of_week);
}

TEST_CASE("cron: month and weekday names in any case, weekday 7 is Sunday", "[unit]") {
  const CronSpec s = parsed("0 0 * JAN-mar,Dec Mon-fri,sun");
  CHECK(on(s.months) == "1,2,3,12");
  CHECK(on(s.weekdays) == "0,1,2,3,4,5");
  CHECK(on(parsed("0 0 * * 7").weekdays) == "0");
  CHECK(on(parsed("0 0 * * 5-7").weekdays) == "0,5,6");
  CHECK(on(parsed("0 0 * * */2").weekdays) == "0,2,4,6");
}

TEST_CASE("cron: the day fields' star flags and the clock rule follow the first character",
          "[unit]") {
  CHECK(parsed("0 0 */2 * 1").any_day_of_month);
  CHECK_FALSE(parsed("0 0 */2 * 1").any_day_of_week);
  CHECK(parsed("*/15 2 * * *").follows_clock);
  CHECK(parsed("30 * * * *").follows_clock);
  CHECK(parsed("0 */2 * * *").follows_clock);
  CHECK_FALSE(parsed("0-59 0-23 * * *").follows_clock);
}

TEST_CASE("cron macros expand to their five fields", "[unit]") {
  CHECK(parsed("@yearly") == parsed("0 0 1 1 *"));
  CHECK(parsed("@annually") == parsed("0 0 1 1 *"));
  CHECK(parsed("@monthly") == parsed("0 0 1 * *"));
  CHECK(parsed("@weekly") == parsed("0 0 * * 0"));
  CHECK(parsed("@DAILY") == parsed("0 0 * * *"));
  CHECK(parsed("@midnight") == parsed("0 0 * * *"));
  CHECK(parsed("@hourly") == parsed("0 * * * *"));
  CHECK(parsed("@hourly").follows_clock);
  CHECK(refused("@often").find("is not a macro") != std::string::npos);
}

TEST_CASE("cron refusals name the field and the part that is wrong", "[unit]") {
  CHECK(refused("0 25 * * *") == "the hour field (2nd of 5) '25': 25 is not in 0-23");
  CHECK(refused("60 * * * *") == "the minute field (1st of 5) '60': 60 is not in 0-59");
  CHECK(refused("0 0 0 * *") == "the day-of-month field (3rd of 5) '0': 0 is not in 1-31");
  CHECK(refused("0 0 * 13 *") == "the month field (4th of 5) '13': 13 is not in 1-12");
  CHECK(refused("0 0 * * 8") == "the day-of-week field (5th of 5) '8': 8 is not in 0-7");
  CHECK(refused("61 0 0 * * *") == "the second field (1st of 6) '61': 61 is not in 0-59");
  CHECK(refused("0 0 * foo *").find("'foo' is neither a number nor a month name") !=
        std::string::npos);
  CHECK(refused("0 0 * * funday").find("weekday name (sun-sat)") != std::string::npos);
  CHECK(refused("x * * * *").find("'x' is not a number") != std::string::npos);
  CHECK(refused("* * * *").find("has 4 fields") != std::string::npos);
  CHECK(refused("* * * * * * *").find("has 7 fields") != std::string::npos);
  CHECK(refused("").find("has 0 fields") != std::string::npos);
  CHECK(refused("*/0 * * * *").find("the step '0'") != std::string::npos);
  CHECK(refused("*/x * * * *").find("the step 'x'") != std::string::npos);
  CHECK(refused("5/10 * * * *").find("a step needs a range") != std::string::npos);
  CHECK(refused("10-5 * * * *").find("ends before it starts") != std::string::npos);
  CHECK(refused("1,,2 * * * *").find("an empty element") != std::string::npos);
  CHECK(refused(std::string(300, '*')).find("longer than") != std::string::npos);
}

TEST_CASE("time zones come from the IANA database, and nothing else reaches it", "[unit]") {
  CHECK(jq::api::find_time_zone("Europe/Berlin"));
  CHECK(jq::api::find_time_zone("UTC"));
  CHECK(jq::api::find_time_zone("America/Argentina/Buenos_Aires"));
  for (const char* bad :
       {"Mars/Olympus", "", "../../etc/passwd", "/etc/localtime", "Europe/Berlin "}) {
    auto zone = jq::api::find_time_zone(bad);
    REQUIRE_FALSE(zone);
    CHECK(zone.error().find("is not a time zone of the IANA database") != std::string::npos);
  }
}
