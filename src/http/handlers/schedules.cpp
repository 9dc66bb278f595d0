#include "src/http/handlers/schedules.hpp"

#include "api/schedule.hpp"
#include "src/http/handlers/store_errors.hpp"
#include "src/http/respond.hpp"

namespace jq::http {
namespace {

using asio::awaitable;
using nlohmann::json;
using schedules::ScheduleStore;

constexpr int kNextRuns = 5;

std::optional<api::MediaType> body_type(const Request& req) {
  return api::parse_content_type(req.content_type);
}

Response unsupported(const Request& req) {
  return respond_error(req, api::ErrorCode::unsupported_media_type,
                       "send the schedule as application/msgpack or application/json");
}

Response answer(const Request& req, int status,
                const Expected<schedules::StoredSchedule, store::StoreError>& stored) {
  if (!stored) return respond_error(req, to_api_error(stored.error()));
  return respond(req, status, schedule_state_view(*stored));
}

awaitable<Response> create(ScheduleStore& store, Request& req) {
  const auto type = body_type(req);
  if (!type) co_return unsupported(req);
  auto s = api::decode_schedule(req.body, *type);
  if (!s) co_return respond_error(req, s.error());
  auto created = co_await store.create(std::move(*s));
  co_return answer(req, 201, created);
}

awaitable<Response> list(ScheduleStore& store, Request& req) {
  auto all = co_await store.list();
  if (!all) co_return respond_error(req, to_api_error(all.error()));
  json out = json::array();
  for (const auto& s : *all) out.push_back(schedule_state_view(s));
  co_return respond(req, 200, out);
}

awaitable<Response> get(ScheduleStore& store, Request& req) {
  auto stored = co_await store.get(std::string(req.param("name")));
  co_return answer(req, 200, stored);
}

awaitable<Response> replace(ScheduleStore& store, Request& req) {
  const auto type = body_type(req);
  if (!type) co_return unsupported(req);
  auto s = api::decode_schedule_replace(req.body, *type, req.param("name"));
  if (!s) co_return respond_error(req, s.error());
  auto replaced = co_await store.replace(std::move(*s));
  co_return answer(req, 200, replaced);
}

awaitable<Response> patch(ScheduleStore& store, Request& req) {
  const auto type = body_type(req);
  if (!type) co_return unsupported(req);
  const std::string name(req.param("name"));
  auto p = api::decode_schedule_patch(req.body, *type, name);
  if (!p) co_return respond_error(req, p.error());
  // A patch that breaks a rule between fields (end_at before start_at) is a 400 here; the
  // store applies it again to what is stored when it writes.
  auto current = co_await store.get(name);
  if (!current) co_return respond_error(req, to_api_error(current.error()));
  if (auto checked = api::apply_patch(current->schedule, *p); !checked) {
    co_return respond_error(req, checked.error());
  }
  auto patched = co_await store.patch(name, std::move(*p));
  co_return answer(req, 200, patched);
}

awaitable<Response> remove(ScheduleStore& store, Request& req) {
  auto removed = co_await store.remove(std::string(req.param("name")));
  if (!removed) co_return respond_error(req, to_api_error(removed.error()));
  co_return respond_no_content();
}

awaitable<Response> run_now(ScheduleStore& store, Request& req) {
  auto fired = co_await store.run_now(std::string(req.param("name")));
  if (!fired) co_return respond_error(req, to_api_error(fired.error()));
  if (fired->outcome == schedules::FireOutcome::duplicate) {
    co_return respond_error(
        req, api::ErrorCode::conflict,
        "the job would be a duplicate: job " + fired->job_id +
            " holds the claim of its unique_key and has not finished; nothing was made");
  }
  co_return respond(req, 201, json{{"id", fired->job_id}});
}

awaitable<Response> preview(ScheduleStore& store, Request& req) {
  const auto type = body_type(req);
  if (!type) co_return unsupported(req);
  auto p = api::decode_schedule_preview(req.body, *type);
  if (!p) co_return respond_error(req, p.error());
  json runs = json::array();
  for (std::int64_t at : schedules::preview_ticks(*p, store.now_ms())) {
    runs.push_back(schedules::format_in_zone(at, p->zone));
  }
  co_return respond(req, 200, json{{"runs", std::move(runs)}});
}

}  // namespace

json schedule_state_view(const schedules::StoredSchedule& stored) {
  const api::Schedule& s = stored.schedule;
  const schedules::ScheduleRecord& r = stored.record;
  const auto at = [&s](std::int64_t ms) {
    return ms > 0 ? json(schedules::format_in_zone(ms, s.zone)) : json(nullptr);
  };
  json next_runs = json::array();
  if (r.next_ms > 0) {
    const auto timetable = schedules::timetable_of(s, r.anchor_ms);
    for (std::int64_t t : schedules::ticks_from(s, timetable, r.next_ms, kNextRuns)) {
      next_runs.push_back(at(t));
    }
  }
  json out = api::schedule_view(s);
  out["next_run_at"] = at(r.next_ms);
  out["next_runs"] = std::move(next_runs);
  out["last_run_at"] = at(r.last_run_ms);
  out["last_job_id"] = r.last_job_id.empty() ? json(nullptr) : json(r.last_job_id);
  out["runs"] = r.runs;
  out["skipped"] = r.skipped;
  out["missed_count"] = r.missed;
  out["duplicates"] = r.duplicates;
  return out;
}

void add_schedule_routes(Router& router, ScheduleStore& schedules) {
  const Roles admin_only = {Role::admin};
  auto& s = schedules;
  router.add(Method::post, "/v1/schedules/preview", admin_only,
             [&s](Request& r) { return preview(s, r); });
  router.add(Method::post, "/v1/schedules", admin_only, [&s](Request& r) { return create(s, r); });
  router.add(Method::get, "/v1/schedules", admin_only, [&s](Request& r) { return list(s, r); });
  router.add(Method::get, "/v1/schedules/{name}", admin_only,
             [&s](Request& r) { return get(s, r); });
  router.add(Method::put, "/v1/schedules/{name}", admin_only,
             [&s](Request& r) { return replace(s, r); });
  router.add(Method::patch, "/v1/schedules/{name}", admin_only,
             [&s](Request& r) { return patch(s, r); });
  router.add(Method::del, "/v1/schedules/{name}", admin_only,
             [&s](Request& r) { return remove(s, r); });
  router.add(Method::post, "/v1/schedules/{name}/run", admin_only,
             [&s](Request& r) { return run_now(s, r); });
}

}  // namespace jq::http
