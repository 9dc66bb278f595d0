// The bodies of `jqctl schedules create` and `schedules preview` built from flags. Only JSON
// syntax is checked here; the master validates every field and names the one that is wrong.
#pragma once

#include <optional>
#include <string>

#include "common/expected.hpp"

namespace jq::ctl {

// A schedule (or a preview's timetable) from flags; an absent field takes the master's default.
struct ScheduleFlags {
  std::string name;
  std::optional<std::string> cron;
  std::optional<long long> every_s;
  std::optional<std::string> timezone;
  std::optional<std::string> job_json;       // the whole job template, as JSON
  std::optional<std::string> job_name;       // or its name ...
  std::optional<std::string> argument_json;  // ... and argument (any JSON value)
  std::optional<std::string> overlap;
  std::optional<std::string> missed;
  std::optional<std::string> start_at;
  std::optional<std::string> end_at;
  bool paused = false;
  std::optional<std::string> from;  // preview only
  std::optional<int> count;         // preview only
};

// The JSON schedule object, or why it cannot be built (no --name, no job, JSON that is not).
Expected<std::string, std::string> schedule_body_from_flags(const ScheduleFlags& flags);

// The JSON body of POST /v1/schedules/preview.
Expected<std::string, std::string> preview_body_from_flags(const ScheduleFlags& flags);

}  // namespace jq::ctl
