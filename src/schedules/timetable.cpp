#include "src/schedules/timetable.hpp"

#include <chrono>
#include <cstdio>

#include <date/tz.h>

namespace jq::schedules {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
using SysSeconds = date::sys_time<seconds>;
using LocalSeconds = date::local_time<seconds>;

// Far enough for any date that comes at all: a weekday on 29 February repeats within 28 years.
constexpr int kSearchYears = 30;

template <std::size_t N>
int next_bit(const std::bitset<N>& bits, int from) {
  for (auto i = static_cast<std::size_t>(from); i < N; ++i) {
    if (bits[i]) return static_cast<int>(i);
  }
  return -1;
}

bool day_matches(const api::CronSpec& s, date::local_days day) {
  const date::year_month_day ymd(day);
  const bool dom = s.days[static_cast<unsigned>(ymd.day())];
  const bool dow = s.weekdays[date::weekday(day).c_encoding()];
  return s.any_day_of_month || s.any_day_of_week ? dom && dow : dom || dow;
}

// The first wall-clock reading after `after` that the fields allow, on the calendar alone.
std::optional<LocalSeconds> next_reading(const api::CronSpec& s, LocalSeconds after) {
  const LocalSeconds start = after + seconds(1);
  auto day = date::floor<date::days>(start);
  auto rest = start - day;
  int h = static_cast<int>(date::floor<hours>(rest).count());
  int m = static_cast<int>(date::floor<minutes>(rest - hours(h)).count());
  int sec = static_cast<int>((rest - hours(h) - minutes(m)).count());
  const date::year last_year = date::year_month_day(day).year() + date::years(kSearchYears);
  const auto next_day = [&] {
    day += date::days(1);
    h = m = sec = 0;
  };
  for (;;) {
    const date::year_month_day ymd(day);
    if (ymd.year() > last_year) return std::nullopt;
    if (!s.months[static_cast<unsigned>(ymd.month())]) {
      auto month = ymd.year() / ymd.month();
      month += date::months(1);
      day = date::local_days(month / 1);
      h = m = sec = 0;
      continue;
    }
    if (!day_matches(s, day)) {
      next_day();
      continue;
    }
    const int hour = next_bit(s.hours, h);
    if (hour < 0) {
      next_day();
      continue;
    }
    if (hour != h) m = sec = 0;
    h = hour;
    const int minute = next_bit(s.minutes, m);
    if (minute < 0) {
      if (++h == 24) next_day();
      m = sec = 0;
      continue;
    }
    if (minute != m) sec = 0;
    m = minute;
    const int second = next_bit(s.seconds, sec);
    if (second < 0) {
      sec = 0;
      if (++m == 60) {
        m = 0;
        if (++h == 24) next_day();
      }
      continue;
    }
    return LocalSeconds{day.time_since_epoch() + hours(h) + minutes(m) + seconds(second)};
  }
}

// Every instant whose local reading matches: offset by offset, between the zone's transitions.
std::optional<SysSeconds> next_following_clock(const api::CronSpec& s, const date::time_zone* z,
                                               SysSeconds after) {
  for (;;) {
    const date::sys_info info = z->get_info(after + seconds(1));
    const auto reading = next_reading(s, LocalSeconds{(after + info.offset).time_since_epoch()});
    if (!reading) return std::nullopt;
    const SysSeconds at{reading->time_since_epoch() - info.offset};
    if (at < info.end) return at;
    after = info.end - seconds(1);  // on into the next offset (a reading may come round again)
  }
}

// Wall-clock times, each at most once: a skipped one at the end of its gap, a repeated one at
// its first occurrence. That mapping never decreases as the reading grows, and no reading
// before the one at `after` maps past `after`, so the search starts there.
std::optional<SysSeconds> next_wall_time(const api::CronSpec& s, const date::time_zone* z,
                                         SysSeconds after) {
  LocalSeconds from{(after + z->get_info(after).offset).time_since_epoch() - seconds(1)};
  for (;;) {
    const auto reading = next_reading(s, from);
    if (!reading) return std::nullopt;
    const date::local_info info = z->get_info(*reading);
    const SysSeconds at = info.result == date::local_info::nonexistent
                              ? info.first.end
                              : SysSeconds{reading->time_since_epoch() - info.first.offset};
    if (at > after) return at;
    from = *reading;
  }
}

}  // namespace

Timetable Timetable::cron(api::CronSpec spec, const date::time_zone* zone) {
  Timetable t;
  t.spec_ = spec;
  t.zone_ = zone;
  return t;
}

Timetable Timetable::every(std::int64_t period_ms, std::int64_t anchor_ms) {
  Timetable t;
  t.period_ms_ = period_ms;
  t.anchor_ms_ = anchor_ms;
  return t;
}

std::optional<std::int64_t> Timetable::next_after(std::int64_t after_ms) const {
  if (zone_ == nullptr) {
    if (after_ms < anchor_ms_) return anchor_ms_;
    return anchor_ms_ + ((after_ms - anchor_ms_) / period_ms_ + 1) * period_ms_;
  }
  const SysSeconds after =
      date::floor<seconds>(date::sys_time<milliseconds>(milliseconds(after_ms)));
  const auto at = spec_.follows_clock ? next_following_clock(spec_, zone_, after)
                                      : next_wall_time(spec_, zone_, after);
  if (!at) return std::nullopt;
  return std::chrono::duration_cast<milliseconds>(at->time_since_epoch()).count();
}

std::string format_in_zone(std::int64_t ms, const date::time_zone* zone) {
  const date::sys_time<milliseconds> at{milliseconds(ms)};
  const date::sys_info info = zone->get_info(at);
  const auto local = at + info.offset;
  const auto day = date::floor<date::days>(local);
  const date::year_month_day ymd(day);
  const date::hh_mm_ss<milliseconds> tod(local - day);
  const auto offset_minutes = std::chrono::duration_cast<minutes>(info.offset).count();
  const long long abs_offset = offset_minutes < 0 ? -offset_minutes : offset_minutes;
  char text[48];
  int n = std::snprintf(
      text, sizeof text, "%04d-%02u-%02uT%02lld:%02lld:%02lld", static_cast<int>(ymd.year()),
      static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
      static_cast<long long>(tod.hours().count()), static_cast<long long>(tod.minutes().count()),
      static_cast<long long>(tod.seconds().count()));
  if (tod.subseconds().count() != 0) {
    n += std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), ".%03lld",
                       static_cast<long long>(tod.subseconds().count()));
  }
  std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), "%c%02lld:%02lld",
                offset_minutes < 0 ? '-' : '+', abs_offset / 60, abs_offset % 60);
  return text;
}

}  // namespace jq::schedules
