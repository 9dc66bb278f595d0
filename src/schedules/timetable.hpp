// When a schedule ticks: a cron expression read as wall-clock times in an IANA time zone, or a
// fixed period of real seconds. Pure functions of their inputs (no clock, no Redis), so the rules
// of the contract's "Daylight saving" are tested directly (tests/unit/schedules_*).
//
// Daylight saving as Debian's cron does it:
// - fixed times (the minute and hour fields do not start with `*`) name wall-clock times: one
//   that a forward change skips runs at the first instant after the gap, once however many of
//   the schedule's times fell into it; one that a backward change repeats runs at its first
//   occurrence only;
// - otherwise the schedule follows the clock as it reads: every instant whose local reading
//   matches is a tick, so `*/15` stays 15 minutes of real time apart through both changes (the
//   repeated hour's readings run twice, the skipped hour's never).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "api/cron.hpp"

namespace date {
class time_zone;
}

namespace jq::schedules {

class Timetable {
 public:
  // `zone` comes from api::find_time_zone and lives as long as the program.
  static Timetable cron(api::CronSpec spec, const date::time_zone* zone);
  // Ticks at anchor + k * period for k = 0, 1, ...
  static Timetable every(std::int64_t period_ms, std::int64_t anchor_ms);

  // The first tick strictly after `after_ms` (milliseconds since the Unix epoch); none when the
  // timetable never ticks again: a cron date that does not come within 30 years (30 February).
  std::optional<std::int64_t> next_after(std::int64_t after_ms) const;

  const date::time_zone* zone() const { return zone_; }
  // `every`: the period (ticks are evenly spaced, so they can be counted without walking them);
  // 0 for a cron timetable.
  std::int64_t period_ms() const { return period_ms_; }

 private:
  Timetable() = default;

  api::CronSpec spec_;
  const date::time_zone* zone_ = nullptr;  // null: `every`
  std::int64_t period_ms_ = 0;
  std::int64_t anchor_ms_ = 0;
};

// ISO 8601 with the offset `zone` has at that instant: 2026-03-29T03:00:00+02:00, with
// milliseconds only when there are any. A schedule's `scheduled_at` and its preview.
std::string format_in_zone(std::int64_t ms, const date::time_zone* zone);

}  // namespace jq::schedules
