// /v1/schedules: create, list, read (with what its ticks did), replace, patch, delete, run now,
// and preview a timetable. Admin only.
#pragma once

#include <nlohmann/json.hpp>

#include "src/http/router.hpp"
#include "src/schedules/schedule_store.hpp"

namespace jq::http {

void add_schedule_routes(Router& router, schedules::ScheduleStore& schedules);

// The object plus {next_run_at, next_runs (the next 5), last_run_at, last_job_id, runs, skipped,
// missed_count, duplicates}, times with the offset of the schedule's zone.
nlohmann::json schedule_state_view(const schedules::StoredSchedule& stored);

}  // namespace jq::http
