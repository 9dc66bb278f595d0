// Recurring schedules (the contract's "Recurring jobs (schedules)"): the wire model, its
// decoders for POST, PUT and PATCH bodies and for POST /v1/schedules/preview, and its encoding
// back to a response value (which is also how a definition is stored in Redis: that map, as
// MessagePack).
//
// Every refusal is invalid_job naming the field: "cron" (with the part of the expression that is
// wrong), "every", "timezone", "job.priority" (the job template is checked by the rules of POST
// /v1/jobs, its fields named under "job."), "start_at"; a body that is not a map, or not
// MessagePack/JSON at all, is bad_request. `null` for an optional field is the same as leaving it
// out, so the object a GET answers can be sent back as it is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "api/cron.hpp"
#include "api/error.hpp"
#include "api/job.hpp"
#include "api/media_type.hpp"
#include "common/expected.hpp"

namespace date {
class time_zone;
}

namespace jq::api {

inline constexpr std::int64_t kMaxEverySeconds = 31536000;  // a year
inline constexpr int kMaxPreviewCount = 100;
inline constexpr int kDefaultPreviewCount = 10;

// 1-128 bytes of A-Z a-z 0-9 _ . : - (the rule of constraint names).
bool is_valid_schedule_name(std::string_view name);

// allow: a tick makes its job whatever the previous one is doing; skip: no job while the
// previous job of this schedule has not finished.
enum class Overlap { allow, skip };
// What happens to ticks no master could run within a second of their time.
enum class MissedPolicy { run_once, skip };

// start_at / end_at: the text as written (given back unchanged) and its instant.
struct ScheduleTime {
  std::string text;
  std::int64_t ms = 0;

  bool operator==(const ScheduleTime&) const = default;
};

struct Schedule {
  std::string name;
  std::string cron;          // as written; empty when the schedule counts `every`
  CronSpec cron_spec;        // `cron` parsed
  std::int64_t every_s = 0;  // 1 ... kMaxEverySeconds; 0 when the schedule has `cron`
  std::string timezone = "UTC";
  const date::time_zone* zone = nullptr;  // `timezone` in the tz database; set by every decoder
  std::string job;  // the job template: a map as MessagePack, byte for byte as given
  Overlap overlap = Overlap::allow;
  MissedPolicy missed = MissedPolicy::run_once;
  std::optional<ScheduleTime> start_at;  // no tick before
  std::optional<ScheduleTime> end_at;    // no tick after
  bool paused = false;

  bool operator==(const Schedule&) const = default;
};

// PATCH: the fields the body gave, in `values`. A `cron` replaces an `every` and the other way
// round; null for start_at or end_at removes it; null for any other field leaves it as it is.
struct SchedulePatch {
  Schedule values;
  bool cron = false, every = false, timezone = false, job = false, overlap = false, missed = false,
       start_at = false, end_at = false, paused = false;
};

// POST /v1/schedules/preview: the timetable fields of a schedule, from when and how many ticks.
struct SchedulePreview {
  std::string cron;
  CronSpec cron_spec;
  std::int64_t every_s = 0;
  std::string timezone = "UTC";
  const date::time_zone* zone = nullptr;
  std::optional<ScheduleTime> start_at;
  std::optional<std::int64_t> from_ms;  // absent: now
  int count = kDefaultPreviewCount;     // 1 ... kMaxPreviewCount
};

// POST /v1/schedules: the whole object; `name`, `job` and one of `cron` and `every` required.
Expected<Schedule, ApiError> decode_schedule(std::string_view body, MediaType type);

// PUT /v1/schedules/{name}: the whole object; `name` may be left out, and when given must be
// `url_name` (else invalid_job, field "name").
Expected<Schedule, ApiError> decode_schedule_replace(std::string_view body, MediaType type,
                                                     std::string_view url_name);

// PATCH /v1/schedules/{name}: any of the fields; `name` as for PUT.
Expected<SchedulePatch, ApiError> decode_schedule_patch(std::string_view body, MediaType type,
                                                        std::string_view url_name);

// The schedule with the patch's fields; invalid_job when the result breaks a rule between fields
// (end_at before start_at).
Expected<Schedule, ApiError> apply_patch(Schedule schedule, const SchedulePatch& patch);

Expected<SchedulePreview, ApiError> decode_schedule_preview(std::string_view body, MediaType type);

// Whether the two differ in when they tick (cron, every, timezone, start_at, end_at): the
// contract's "a new timetable or zone counts from now".
bool timetable_changed(const Schedule& before, const Schedule& after);

// The job template decoded with `defaults` for the fields it leaves out: the job each tick makes.
Expected<NewJob, ApiError> template_job(const Schedule& schedule, const JobDefaults& defaults);

// The object as the API answers it: {name, cron, every, timezone, job, overlap, missed,
// start_at, end_at, paused}, the absent ones of cron/every/start_at/end_at as null; `job` is a
// raw_msgpack() value (api/body.hpp).
nlohmann::json schedule_view(const Schedule& schedule);

// The definition as stored in Redis: schedule_view() as MessagePack. Equal schedules encode to
// equal bytes (map keys are sorted).
std::string encode_schedule(const Schedule& schedule);

std::string_view to_string(Overlap overlap);
std::string_view to_string(MissedPolicy missed);

}  // namespace jq::api
