// Schedule bodies: one table of field rules (field_map.hpp) per body (the object, its patch, a
// preview request). The timetable's fields (cron, every, timezone, start_at) are read by the same
// functions for a schedule and a preview; rules between fields are checked after the map.
#include "api/schedule.hpp"

#include <array>
#include <type_traits>

#include "api/body.hpp"
#include "api/constraint.hpp"
#include "api/field_map.hpp"
#include "api/field_values.hpp"
#include "api/msgpack_reader.hpp"
#include "api/time_zone.hpp"
#include "api/timestamp.hpp"

namespace jq::api {

namespace {

constexpr std::string_view kNil = "\xc0";

Expected<std::string, ApiError> read_name(std::string_view value) {
  const auto name = read_string_field("name", value);
  if (!name) return unexpected(name.error());
  if (!is_valid_schedule_name(*name)) {
    return unexpected(field_error(
        "name", "name must be 1-128 bytes of A-Z a-z 0-9 _ . : -, got " + describe_value(value)));
  }
  return std::string(*name);
}

// --- The timetable's fields, shared by Schedule and SchedulePreview (null: not given).

template <class T>
Expected<void, ApiError> apply_cron(T& t, std::string_view value) {
  if (value == kNil) return {};
  const auto text = MsgpackReader(value).read_str();
  if (!text) {
    return unexpected(field_error(
        "cron", "cron must be a string such as \"30 2 * * *\", got " + describe_value(value)));
  }
  auto spec = parse_cron(*text);
  if (!spec) return unexpected(field_error("cron", "cron: " + spec.error()));
  t.cron = std::string(*text);
  t.cron_spec = *spec;
  return {};
}

template <class T>
Expected<void, ApiError> apply_every(T& t, std::string_view value) {
  if (value == kNil) return {};
  const auto every = read_int_field("every", value, 1, kMaxEverySeconds);
  if (!every) return unexpected(every.error());
  t.every_s = *every;
  return {};
}

template <class T>
Expected<void, ApiError> apply_timezone(T& t, std::string_view value) {
  if (value == kNil) return {};
  const auto name = read_string_field("timezone", value);
  if (!name) return unexpected(name.error());
  const auto zone = find_time_zone(*name);
  if (!zone) return unexpected(field_error("timezone", "timezone " + zone.error()));
  t.timezone = std::string(*name);
  t.zone = *zone;
  return {};
}

Expected<std::optional<ScheduleTime>, ApiError> read_time(std::string_view field,
                                                          std::string_view value) {
  if (value == kNil) return std::optional<ScheduleTime>();
  const std::string rule = std::string(field) +
                           " must be an ISO 8601 time with an offset, such as "
                           "2026-12-01T00:00:00Z or 2026-12-01T01:00:00+01:00, got " +
                           describe_value(value);
  const auto text = MsgpackReader(value).read_str();
  if (!text) return unexpected(field_error(field, rule));
  const auto ms = parse_timestamp_ms(*text);
  if (!ms) return unexpected(field_error(field, rule + ", which " + ms.error()));
  return std::optional<ScheduleTime>(ScheduleTime{std::string(*text), *ms});
}

template <class T>
Expected<void, ApiError> apply_start_at(T& t, std::string_view value) {
  auto at = read_time("start_at", value);
  if (!at) return unexpected(std::move(at.error()));
  t.start_at = std::move(*at);
  return {};
}

// Exactly one of cron and every (the contract names `cron` in the error).
Expected<void, ApiError> check_one_timetable(bool cron, bool every) {
  if (cron && every) {
    return unexpected(
        field_error("cron",
                    "cron and every cannot be given together: give a cron expression or a period "
                    "in seconds"));
  }
  if (!cron && !every) {
    return unexpected(field_error(
        "cron", "a schedule needs cron (e.g. \"30 2 * * *\") or every (seconds between ticks)"));
  }
  return {};
}

// --- The rest of a schedule.

// A job as in POST /v1/jobs, without delay or run_at (its ticks say when it runs). Its errors
// name the field under "job.".
Expected<std::string, ApiError> read_job(std::string_view value) {
  MsgpackReader reader(value);
  const auto pairs = reader.read_map_header();
  if (!pairs) {
    return unexpected(field_error("job",
                                  "job must be a job as in POST /v1/jobs (a map with at "
                                  "least a name), got " +
                                      describe_value(value)));
  }
  for (std::uint32_t i = 0; i < *pairs; ++i) {
    const auto key_bytes = reader.skip();
    if (!key_bytes || !reader.skip()) break;  // malformed: the job decoder says so
    const auto key = MsgpackReader(*key_bytes).read_str();
    if (key && (*key == "delay" || *key == "run_at")) {
      const std::string field = "job." + std::string(*key);
      return unexpected(
          field_error(field, field + " cannot be given: a schedule's ticks say when its jobs run"));
    }
  }
  auto job = decode_job_map(value, JobDefaults{});
  if (!job) {
    ApiError error = std::move(job.error());
    if (error.field) {
      if (error.message.starts_with(*error.field + " ")) error.message = "job." + error.message;
      error.field = "job." + *error.field;
    } else {
      error.field = "job";
      error.message = "job: " + error.message;
    }
    error.code = ErrorCode::invalid_job;
    return unexpected(std::move(error));
  }
  // Every tick pushes the same template, so a merge would only fold copies of one argument into
  // a waiting job (replace: nothing changes; append: a list of identical copies); overlap: skip
  // is the schedule's way not to pile jobs up.
  if (job->on_duplicate != OnDuplicate::keep) {
    ApiError error = field_error("job.on_duplicate",
                                 "job.on_duplicate cannot be \"replace\" or \"append\" in a "
                                 "schedule: its ticks push one template, so there is nothing to "
                                 "merge; leave it out (or \"keep\"), and use overlap: skip to keep "
                                 "jobs from piling up");
    error.code = ErrorCode::invalid_job;
    return unexpected(std::move(error));
  }
  return std::string(value);
}

template <class E>
Expected<E, ApiError> read_choice(std::string_view field, std::string_view value,
                                  std::string_view first, E first_value, std::string_view second,
                                  E second_value) {
  const auto text = MsgpackReader(value).read_str();
  if (text && *text == first) return first_value;
  if (text && *text == second) return second_value;
  return unexpected(field_error(field, std::string(field) + " must be \"" + std::string(first) +
                                           "\" or \"" + std::string(second) + "\", got " +
                                           describe_value(value)));
}

Expected<void, ApiError> apply_job(Schedule& s, std::string_view value) {
  if (value == kNil) return {};
  auto job = read_job(value);
  if (!job) return unexpected(std::move(job.error()));
  s.job = std::move(*job);
  return {};
}

Expected<void, ApiError> apply_overlap(Schedule& s, std::string_view value) {
  if (value == kNil) return {};
  auto o = read_choice("overlap", value, "allow", Overlap::allow, "skip", Overlap::skip);
  if (!o) return unexpected(std::move(o.error()));
  s.overlap = *o;
  return {};
}

Expected<void, ApiError> apply_missed(Schedule& s, std::string_view value) {
  if (value == kNil) return {};
  auto m =
      read_choice("missed", value, "run_once", MissedPolicy::run_once, "skip", MissedPolicy::skip);
  if (!m) return unexpected(std::move(m.error()));
  s.missed = *m;
  return {};
}

Expected<void, ApiError> apply_end_at(Schedule& s, std::string_view value) {
  auto at = read_time("end_at", value);
  if (!at) return unexpected(std::move(at.error()));
  s.end_at = std::move(*at);
  return {};
}

Expected<void, ApiError> apply_paused(Schedule& s, std::string_view value) {
  if (value == kNil) return {};
  const auto paused = read_bool_field("paused", value);
  if (!paused) return unexpected(paused.error());
  s.paused = *paused;
  return {};
}

Expected<void, ApiError> check_window(const Schedule& s) {
  if (s.start_at && s.end_at && s.end_at->ms < s.start_at->ms) {
    return unexpected(field_error("end_at", "end_at (" + s.end_at->text + ") is before start_at (" +
                                                s.start_at->text +
                                                "): the schedule would never tick"));
  }
  return {};
}

// --- The whole object (POST, PUT) and a patch: one table, `name` apart.

struct Draft {
  std::optional<std::string> name;
  Schedule schedule;
};

template <class D>
Schedule& schedule_of(D& d) {
  if constexpr (std::is_same_v<D, Draft>) {
    return d.schedule;
  } else {
    return d.patch.values;
  }
}

struct PatchDraft {
  std::optional<std::string> name;
  SchedulePatch patch;
};

// The rule for `field`, applied to the draft's schedule; for a patch it also records that the
// field was given (null counts for start_at and end_at only: it removes them).
template <class D, Expected<void, ApiError> (*Apply)(Schedule&, std::string_view),
          bool SchedulePatch::*Given>
Expected<void, ApiError> rule(D& d, std::string_view value) {
  if (auto applied = Apply(schedule_of(d), value); !applied) return applied;
  if constexpr (std::is_same_v<D, PatchDraft>) {
    const bool removes = Given == &SchedulePatch::start_at || Given == &SchedulePatch::end_at;
    if (value != kNil || removes) d.patch.*Given = true;
  }
  return {};
}

template <class D>
Expected<void, ApiError> apply_draft_name(D& d, std::string_view value) {
  auto name = read_name(value);
  if (!name) return unexpected(std::move(name.error()));
  d.name = std::move(*name);
  return {};
}

template <class D>
Expected<void, ApiError> ignore(D&, std::string_view) {
  return {};
}

template <class D>
constexpr std::array<FieldRule<D>, 18> kRules{{
    {"name", false, apply_draft_name<D>},
    {"cron", false, rule<D, apply_cron<Schedule>, &SchedulePatch::cron>},
    {"every", false, rule<D, apply_every<Schedule>, &SchedulePatch::every>},
    {"timezone", false, rule<D, apply_timezone<Schedule>, &SchedulePatch::timezone>},
    {"job", std::is_same_v<D, Draft>, rule<D, apply_job, &SchedulePatch::job>},
    {"overlap", false, rule<D, apply_overlap, &SchedulePatch::overlap>},
    {"missed", false, rule<D, apply_missed, &SchedulePatch::missed>},
    {"start_at", false, rule<D, apply_start_at<Schedule>, &SchedulePatch::start_at>},
    {"end_at", false, rule<D, apply_end_at, &SchedulePatch::end_at>},
    {"paused", false, rule<D, apply_paused, &SchedulePatch::paused>},
    // What GET adds to the definition: accepted and ignored, so a GET's answer can be sent
    // back as it is.
    {"next_run_at", false, ignore<D>},
    {"next_runs", false, ignore<D>},
    {"last_run_at", false, ignore<D>},
    {"last_job_id", false, ignore<D>},
    {"runs", false, ignore<D>},
    {"skipped", false, ignore<D>},
    {"missed_count", false, ignore<D>},
    {"duplicates", false, ignore<D>},
}};

constexpr FieldMapSpec kScheduleSpec{"a schedule", "", false};

Expected<void, ApiError> check_url_name(const std::optional<std::string>& name,
                                        std::string_view url_name) {
  if (!name || *name == url_name) return {};
  return unexpected(field_error("name", "name must be the schedule's name in the URL (\"" +
                                            std::string(url_name) + "\"), got \"" + *name +
                                            "\"; to rename a schedule, create the new one and "
                                            "delete the old"));
}

const date::time_zone* utc() {
  static const date::time_zone* zone = *find_time_zone("UTC");
  return zone;
}

// A place deep in the job's argument, which JSON that MessagePack cannot hold names, is named
// as the argument: it is the pusher's own (as in a push).
ApiError named_to_argument(ApiError error) {
  constexpr std::string_view kArgument = "job.argument";
  if (error.field && error.field->size() > kArgument.size() &&
      error.field->starts_with(kArgument) &&
      ((*error.field)[kArgument.size()] == '.' || (*error.field)[kArgument.size()] == '[')) {
    error.field = std::string(kArgument);
  }
  return error;
}

Expected<Schedule, ApiError> decode_whole(std::string_view body, MediaType type,
                                          std::optional<std::string_view> url_name) {
  auto draft = decode_body_map(body, type, kRules<Draft>, kScheduleSpec);
  if (!draft) return unexpected(named_to_argument(std::move(draft.error())));
  Schedule& s = draft->schedule;
  if (url_name) {
    if (auto same = check_url_name(draft->name, *url_name); !same) {
      return unexpected(same.error());
    }
    s.name = std::string(*url_name);
  } else if (!draft->name) {
    return unexpected(missing_field_error(kScheduleSpec, "name"));
  } else {
    s.name = std::move(*draft->name);
  }
  // The field map takes a null as given; a schedule cannot be without its job.
  if (s.job.empty()) return unexpected(missing_field_error(kScheduleSpec, "job"));
  if (auto one = check_one_timetable(!s.cron.empty(), s.every_s > 0); !one) {
    return unexpected(one.error());
  }
  if (auto window = check_window(s); !window) return unexpected(window.error());
  if (s.zone == nullptr) s.zone = utc();
  return std::move(draft->schedule);
}

// --- Preview: {cron | every, timezone, start_at, from, count}.

Expected<void, ApiError> apply_from(SchedulePreview& p, std::string_view value) {
  auto at = read_time("from", value);
  if (!at) return unexpected(std::move(at.error()));
  if (*at) p.from_ms = (*at)->ms;
  return {};
}

Expected<void, ApiError> apply_count(SchedulePreview& p, std::string_view value) {
  if (value == kNil) return {};
  const auto count = read_int_field("count", value, 1, kMaxPreviewCount);
  if (!count) return unexpected(count.error());
  p.count = static_cast<int>(*count);
  return {};
}

constexpr std::array<FieldRule<SchedulePreview>, 6> kPreviewRules{{
    {"cron", false, apply_cron<SchedulePreview>},
    {"every", false, apply_every<SchedulePreview>},
    {"timezone", false, apply_timezone<SchedulePreview>},
    {"start_at", false, apply_start_at<SchedulePreview>},
    {"from", false, apply_from},
    {"count", false, apply_count},
}};

constexpr FieldMapSpec kPreviewSpec{"a preview request", "", false};

nlohmann::json text_or_null(const std::optional<ScheduleTime>& t) {
  return t ? nlohmann::json(t->text) : nlohmann::json(nullptr);
}

}  // namespace

bool is_valid_schedule_name(std::string_view name) {
  return is_valid_constraint_name(name);
}

Expected<Schedule, ApiError> decode_schedule(std::string_view body, MediaType type) {
  return decode_whole(body, type, std::nullopt);
}

Expected<Schedule, ApiError> decode_schedule_replace(std::string_view body, MediaType type,
                                                     std::string_view url_name) {
  return decode_whole(body, type, url_name);
}

Expected<SchedulePatch, ApiError> decode_schedule_patch(std::string_view body, MediaType type,
                                                        std::string_view url_name) {
  auto draft = decode_body_map(body, type, kRules<PatchDraft>, kScheduleSpec);
  if (!draft) return unexpected(named_to_argument(std::move(draft.error())));
  if (auto same = check_url_name(draft->name, url_name); !same) return unexpected(same.error());
  const SchedulePatch& p = draft->patch;
  if (p.cron && p.every) {
    if (auto one = check_one_timetable(true, true); !one) return unexpected(one.error());
  }
  return std::move(draft->patch);
}

Expected<Schedule, ApiError> apply_patch(Schedule s, const SchedulePatch& p) {
  const Schedule& v = p.values;
  if (p.cron) {
    s.cron = v.cron;
    s.cron_spec = v.cron_spec;
    s.every_s = 0;
  }
  if (p.every) {
    s.every_s = v.every_s;
    s.cron.clear();
    s.cron_spec = CronSpec{};
  }
  if (p.timezone) {
    s.timezone = v.timezone;
    s.zone = v.zone;
  }
  if (p.job) s.job = v.job;
  if (p.overlap) s.overlap = v.overlap;
  if (p.missed) s.missed = v.missed;
  if (p.start_at) s.start_at = v.start_at;
  if (p.end_at) s.end_at = v.end_at;
  if (p.paused) s.paused = v.paused;
  if (auto window = check_window(s); !window) return unexpected(window.error());
  return s;
}

Expected<SchedulePreview, ApiError> decode_schedule_preview(std::string_view body, MediaType type) {
  auto preview = decode_body_map(body, type, kPreviewRules, kPreviewSpec);
  if (!preview) return unexpected(std::move(preview.error()));
  if (auto one = check_one_timetable(!preview->cron.empty(), preview->every_s > 0); !one) {
    return unexpected(one.error());
  }
  if (preview->zone == nullptr) preview->zone = utc();
  return std::move(*preview);
}

bool timetable_changed(const Schedule& a, const Schedule& b) {
  return a.cron != b.cron || a.every_s != b.every_s || a.timezone != b.timezone ||
         a.start_at != b.start_at || a.end_at != b.end_at;
}

Expected<NewJob, ApiError> template_job(const Schedule& schedule, const JobDefaults& defaults) {
  return decode_job_map(schedule.job, defaults);
}

std::string_view to_string(Overlap overlap) {
  return overlap == Overlap::skip ? "skip" : "allow";
}

std::string_view to_string(MissedPolicy missed) {
  return missed == MissedPolicy::skip ? "skip" : "run_once";
}

nlohmann::json schedule_view(const Schedule& s) {
  return {{"name", s.name},
          {"cron", s.cron.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.cron)},
          {"every", s.every_s > 0 ? nlohmann::json(s.every_s) : nlohmann::json(nullptr)},
          {"timezone", s.timezone},
          {"job", raw_msgpack(s.job)},
          {"overlap", to_string(s.overlap)},
          {"missed", to_string(s.missed)},
          {"start_at", text_or_null(s.start_at)},
          {"end_at", text_or_null(s.end_at)},
          {"paused", s.paused}};
}

std::string encode_schedule(const Schedule& schedule) {
  return encode_body(schedule_view(schedule), MediaType::msgpack);
}

}  // namespace jq::api
