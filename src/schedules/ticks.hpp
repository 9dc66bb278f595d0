// When a stored schedule ticks and what a due tick does: pure functions of a schedule's
// definition, its anchor and the time, so the contract's "Missed ticks" and the window
// (start_at, end_at) are tested without a clock (tests/unit/schedules_ticks_test.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "api/schedule.hpp"
#include "src/schedules/timetable.hpp"

namespace jq::schedules {

// A tick whose job is made more than this after its time was missed (the contract's "within
// 1 s of its time").
inline constexpr std::int64_t kOnTimeMs = 1000;
// Missed ticks counted one by one at most; beyond, the rest are estimated from their spacing.
inline constexpr std::int64_t kMaxTicksWalked = 100'000;

// `every` counts from start_at, else from `anchor_ms` (when the timetable was set).
Timetable timetable_of(const api::Schedule& schedule, std::int64_t anchor_ms);

// The first tick after `after_ms` within the schedule's start_at and end_at; nullopt: no more.
std::optional<std::int64_t> tick_after(const api::Schedule& schedule, const Timetable& timetable,
                                       std::int64_t after_ms);

// `first_ms` (a tick) and the ticks after it, `count` at most.
std::vector<std::int64_t> ticks_from(const api::Schedule& schedule, const Timetable& timetable,
                                     std::int64_t first_ms, int count);

// What one step of the runner does for a schedule whose next tick has come.
struct TickPlan {
  bool run = true;            // make a job (for tick_ms); false: every due tick is missed
  std::int64_t tick_ms = 0;   // the job's scheduled_at: the latest tick due
  std::int64_t missed = 0;    // due ticks counted as missed
  std::int64_t after_ms = 0;  // the next tick after now; 0 none (ended)
};

// `next_ms` (<= now_ms) is the schedule's next tick as stored. The latest tick due runs when it is
// on time; with missed: run_once it also runs when it is late (the earlier ones are missed);
// with skip every late tick is missed.
TickPlan plan_tick(const api::Schedule& schedule, const Timetable& timetable, std::int64_t next_ms,
                   std::int64_t now_ms);
// The same for a schedule a master found due at `found_ms` (<= now_ms) and makes the tick of
// only now: the latest tick due is late by how long after its time it was found (the master's
// own backlog does not make it late), or, when it fell due after that, by how long ago.
TickPlan plan_tick(const api::Schedule& schedule, const Timetable& timetable, std::int64_t next_ms,
                   std::int64_t now_ms, std::int64_t found_ms);

// POST /v1/schedules/preview: the ticks after `from` (default `now_ms`).
std::vector<std::int64_t> preview_ticks(const api::SchedulePreview& preview, std::int64_t now_ms);

}  // namespace jq::schedules
