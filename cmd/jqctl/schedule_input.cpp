#include "cmd/jqctl/schedule_input.hpp"

#include <nlohmann/json.hpp>

#include "cmd/jqctl/job_input.hpp"

namespace jq::ctl {
namespace {

using nlohmann::json;

template <class T>
void put(json& body, const char* key, const std::optional<T>& value) {
  if (value) body[key] = *value;
}

// cron, every, timezone and start_at: what a schedule and a preview share.
json timetable(const ScheduleFlags& f) {
  json body = json::object();
  put(body, "cron", f.cron);
  put(body, "every", f.every_s);
  put(body, "timezone", f.timezone);
  put(body, "start_at", f.start_at);
  return body;
}

// The job template's JSON text: what the user wrote is kept as written (see with_raw_member).
Expected<std::string, std::string> job_template(const ScheduleFlags& f) {
  if (f.job_json) {
    auto checked = parse_json(*f.job_json, "--job");
    if (!checked) return unexpected(std::move(checked.error()));
    return std::string(without_bom(*f.job_json));
  }
  if (!f.job_name) {
    return unexpected(
        std::string("give the job each tick makes: --job-name NAME (with "
                    "--argument JSON), or --job JSON"));
  }
  json job = {{"name", *f.job_name}};
  if (!f.argument_json) return job.dump();
  auto argument = parse_json(*f.argument_json, "--argument");
  if (!argument) return unexpected(std::move(argument.error()));
  return with_raw_member(job, "argument", *f.argument_json);
}

}  // namespace

Expected<std::string, std::string> schedule_body_from_flags(const ScheduleFlags& f) {
  if (f.name.empty()) {
    return unexpected(
        std::string("give the schedule with --name and its fields, or --file/--json"));
  }
  auto job = job_template(f);
  if (!job) return unexpected(std::move(job.error()));
  json body = timetable(f);
  body["name"] = f.name;
  put(body, "overlap", f.overlap);
  put(body, "missed", f.missed);
  put(body, "end_at", f.end_at);
  if (f.paused) body["paused"] = true;
  return with_raw_member(body, "job", *job);
}

Expected<std::string, std::string> preview_body_from_flags(const ScheduleFlags& f) {
  json body = timetable(f);
  put(body, "from", f.from);
  put(body, "count", f.count);
  return body.dump();
}

}  // namespace jq::ctl
