// A cron timetable as a schedule's `cron` writes it (the contract's "Recurring jobs"): Vixie
// cron's syntax, which Debian's cron and most users know, parsed into the sets of values each
// field allows. Which instants those wall-clock values are is the timetable's business
// (src/schedule/timetable.hpp): this is only the syntax.
//
// Five fields (minute hour day-of-month month day-of-week) or six with seconds first. Each field
// is a comma list of `*`, `n`, `a-b`, `*/s` or `a-b/s`; months and weekdays also by their
// English three-letter names in any case (`JAN`, `mon-fri`); weekday 0-7 where 0 and 7 are
// Sunday. The macros @yearly (@annually), @monthly, @weekly, @daily (@midnight) and @hourly.
#pragma once

#include <bitset>
#include <string>
#include <string_view>

#include "common/expected.hpp"

namespace jq::api {

inline constexpr std::size_t kMaxCronBytes = 256;

struct CronSpec {
  std::bitset<60> seconds;  // 0-59; {0} for a five-field expression
  std::bitset<60> minutes;  // 0-59
  std::bitset<24> hours;    // 0-23
  std::bitset<32> days;     // 1-31 (bit 0 unused)
  std::bitset<13> months;   // 1-12 (bit 0 unused)
  std::bitset<7> weekdays;  // 0-6, Sunday 0
  // Vixie's rule for the two day fields: when either starts with `*` a day must match both
  // (the starred one matches every day); when both are restricted, a day matching either runs.
  bool any_day_of_month = false;
  bool any_day_of_week = false;
  // The minute or the hour field starts with `*` (also @hourly): the schedule follows the
  // clock as it reads through a daylight-saving change instead of naming fixed wall times.
  bool follows_clock = false;

  bool operator==(const CronSpec&) const = default;
};

// The error names the part that is wrong in words for a message, e.g.
// "the hour field (2nd of 5) '25': 25 is not in 0-23".
Expected<CronSpec, std::string> parse_cron(std::string_view text);

}  // namespace jq::api
