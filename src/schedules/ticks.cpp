#include "src/schedules/ticks.hpp"

#include <algorithm>

namespace jq::schedules {
namespace {

constexpr std::int64_t kDayMs = 86'400'000;

struct DueTicks {
  std::int64_t count = 0;  // ticks in [first, until]
  std::int64_t last = 0;   // the latest of them
};

// The ticks from `first` (a tick) to `until`, both included. `every` is counted; cron ticks are
// walked, kMaxTicksWalked at most: past that the rest are estimated from the spacing of those
// walked, and the last is found by walking the final day (ticks that dense are seconds apart).
DueTicks due_ticks(const api::Schedule& s, const Timetable& t, std::int64_t first,
                   std::int64_t until) {
  if (const std::int64_t period = t.period_ms(); period > 0) {
    const std::int64_t count = (until - first) / period + 1;
    return {count, first + (count - 1) * period};
  }
  DueTicks due{1, first};
  while (due.count < kMaxTicksWalked) {
    const auto next = tick_after(s, t, due.last);
    if (!next || *next > until) return due;
    ++due.count;
    due.last = *next;
  }
  const std::int64_t from = std::max(due.last, until - kDayMs);
  const std::int64_t spacing = std::max<std::int64_t>(1, (due.last - first) / (due.count - 1));
  due.count += (from - due.last) / spacing;
  due.last = from;
  for (auto next = tick_after(s, t, from); next && *next <= until; next = tick_after(s, t, *next)) {
    ++due.count;
    due.last = *next;
  }
  return due;
}

}  // namespace

Timetable timetable_of(const api::Schedule& s, std::int64_t anchor_ms) {
  if (s.every_s > 0) {
    return Timetable::every(s.every_s * 1000, s.start_at ? s.start_at->ms : anchor_ms);
  }
  return Timetable::cron(s.cron_spec, s.zone);
}

std::optional<std::int64_t> tick_after(const api::Schedule& s, const Timetable& t,
                                       std::int64_t after_ms) {
  if (s.start_at) after_ms = std::max(after_ms, s.start_at->ms - 1);
  const auto next = t.next_after(after_ms);
  if (!next || (s.end_at && *next > s.end_at->ms)) return std::nullopt;
  return next;
}

std::vector<std::int64_t> ticks_from(const api::Schedule& s, const Timetable& t,
                                     std::int64_t first_ms, int count) {
  std::vector<std::int64_t> out;
  std::optional<std::int64_t> at = first_ms;
  while (at && static_cast<int>(out.size()) < count) {
    out.push_back(*at);
    at = tick_after(s, t, *at);
  }
  return out;
}

TickPlan plan_tick(const api::Schedule& s, const Timetable& t, std::int64_t next_ms,
                   std::int64_t now_ms) {
  return plan_tick(s, t, next_ms, now_ms, now_ms);
}

TickPlan plan_tick(const api::Schedule& s, const Timetable& t, std::int64_t next_ms,
                   std::int64_t now_ms, std::int64_t found_ms) {
  const std::int64_t until = s.end_at ? std::min(now_ms, s.end_at->ms) : now_ms;
  const DueTicks due = due_ticks(s, t, next_ms, std::max(until, next_ms));
  TickPlan plan;
  plan.tick_ms = due.last;
  // Late by how long after its time a master found it due; a tick that fell due after that, by
  // now.
  const std::int64_t late = due.last <= found_ms ? found_ms - due.last : now_ms - due.last;
  plan.run = late <= kOnTimeMs || s.missed == api::MissedPolicy::run_once;
  plan.missed = plan.run ? due.count - 1 : due.count;
  plan.after_ms = tick_after(s, t, std::max(due.last, now_ms)).value_or(0);
  return plan;
}

std::vector<std::int64_t> preview_ticks(const api::SchedulePreview& p, std::int64_t now_ms) {
  api::Schedule s;
  s.cron = p.cron;
  s.cron_spec = p.cron_spec;
  s.every_s = p.every_s;
  s.zone = p.zone;
  s.start_at = p.start_at;
  const std::int64_t from = p.from_ms.value_or(now_ms);
  const Timetable t = timetable_of(s, from);
  const auto first = tick_after(s, t, from);
  if (!first) return {};
  return ticks_from(s, t, *first, p.count);
}

}  // namespace jq::schedules
