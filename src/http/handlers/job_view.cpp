#include "src/http/handlers/job_view.hpp"

#include "src/util/time.hpp"

namespace jq::http {
namespace {

using nlohmann::json;

// A timeout goes back out the way it usually comes in: whole seconds as an integer.
json timeout_seconds(std::int64_t timeout_ms) {
  if (timeout_ms % 1000 == 0) return timeout_ms / 1000;
  return static_cast<double>(timeout_ms) / 1000.0;
}

}  // namespace

json job_view(const std::string& id, const store::JobRecord& r) {
  json view = {{"id", id},
               {"name", r.name},
               {"priority", r.priority},
               {"max_retry", r.max_retry},
               {"keep_result", r.keep_result},
               {"timeout", timeout_seconds(r.timeout_ms)},
               {"state", store::to_string(r.state)},
               {"attempts", r.attempts},
               {"enqueued_at", iso8601_utc(r.enqueued_at_ms)}};
  if (!r.last_error.empty()) view["last_error"] = r.last_error;
  if (r.state == store::JobState::scheduled && r.ready_at_ms > 0) {
    view["ready_at"] = iso8601_utc(r.ready_at_ms);
  }
  if (r.state == store::JobState::queued && !r.blocked_by.empty()) {
    view["blocked_by"] = r.blocked_by;
  }
  if (!r.unique_key.empty()) view["unique_key"] = r.unique_key;
  if (!r.ordering_key.empty()) view["ordering_key"] = r.ordering_key;
  if (!r.schedule.empty()) {
    view["schedule"] = r.schedule;
    view["scheduled_at"] = r.scheduled_at;
  }
  return view;
}

}  // namespace jq::http
