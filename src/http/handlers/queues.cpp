#include "src/http/handlers/queues.hpp"

#include <chrono>

#include "api/body.hpp"
#include "api/job.hpp"
#include "api/job_browse.hpp"
#include "api/query.hpp"
#include "src/http/handlers/job_view.hpp"
#include "src/http/handlers/store_errors.hpp"
#include "src/http/respond.hpp"
#include "src/util/time.hpp"

namespace jq::http {
namespace {

using asio::awaitable;
using nlohmann::json;
using PausedHook = std::function<void()>;

constexpr int kDefaultDeadLimit = 100;
constexpr int kMaxDeadLimit = 1000;

json queue_view(const store::QueueInfo& q) {
  return {
      {"name", q.name}, {"ready", q.ready},   {"scheduled", q.scheduled},    {"running", q.running},
      {"dead", q.dead}, {"paused", q.paused}, {"lag_seconds", q.lag_seconds}};
}

json dead_view(store::DeadJob& d) {
  return {{"id", d.id.str()},
          {"name", std::move(d.name)},
          {"attempts", d.attempts},
          {"failed_at", iso8601_utc(d.failed_at_ms)},
          {"result", d.result.empty() ? json(nullptr) : api::raw_msgpack(std::move(d.result))}};
}

awaitable<Response> list(store::QueueStore& queues, Request& req) {
  auto all = co_await queues.list();
  if (!all) co_return respond_error(req, to_api_error(all.error()));
  json out = json::array();
  for (const auto& q : *all) out.push_back(queue_view(q));
  co_return respond(req, 200, out);
}

awaitable<Response> get(store::QueueStore& queues, Request& req) {
  auto q = co_await queues.queue(std::string(req.param("name")));
  if (!q) co_return respond_error(req, to_api_error(q.error()));
  co_return respond(req, 200, queue_view(*q));
}

// invalid_job for a name in the path (as a push would refuse it), bad_request for one in the
// query (as GET /v1/jobs?name= does).
api::ApiError invalid_name(const std::string& name,
                           api::ErrorCode code = api::ErrorCode::invalid_job) {
  auto e = api::ApiError::make(
      code, "name must be " + std::string(api::kJobNameRule) + ", got \"" + name + "\"");
  e.field = "name";
  return e;
}

// Pausing a name no job has used yet is allowed (it is then listed), so the name is checked as
// a push would check it.
awaitable<Response> set_paused(store::QueueStore& queues, const PausedHook& on_changed,
                               Request& req, bool paused) {
  std::string name(req.param("name"));
  if (!api::is_valid_job_name(name)) co_return respond_error(req, invalid_name(name));
  // One co_await per statement: g++ 12 mishandles a co_await on a conditional expression.
  Expected<store::QueueInfo, store::StoreError> q;
  if (paused) {
    q = co_await queues.pause(std::move(name));
  } else {
    q = co_await queues.resume(std::move(name));
  }
  if (!q) co_return respond_error(req, to_api_error(q.error()));
  on_changed();
  co_return respond(req, 200, queue_view(*q));
}

// The `limit` query parameter (default 100), or the error to answer.
Expected<int, api::ApiError> parse_limit(const Request& req) {
  auto limit = api::query_number(req.query, {.name = "limit",
                                             .min = 1,
                                             .max = kMaxDeadLimit,
                                             .fallback = kDefaultDeadLimit,
                                             .integer = true,
                                             .unit = ""});
  if (!limit) return unexpected(std::move(limit.error()));
  return static_cast<int>(*limit);
}

awaitable<Response> dead(store::QueueStore& queues, Request& req) {
  auto limit = parse_limit(req);
  if (!limit) co_return respond_error(req, limit.error());
  auto name = api::query_value(req.query, "name");
  if (!name) co_return respond_error(req, name.error());
  // Empty: every name (openapi). Otherwise checked as a push checks it: a name no job can have
  // answered an empty list, as if there were nothing to fix.
  if (*name && !(*name)->empty() && !api::is_valid_job_name(**name)) {
    co_return respond_error(req, invalid_name(**name, api::ErrorCode::bad_request));
  }
  auto jobs = co_await queues.dead(name->value_or(""), *limit);
  if (!jobs) co_return respond_error(req, to_api_error(jobs.error()));
  json out = json::array();
  for (auto& d : *jobs) out.push_back(dead_view(d));
  co_return respond(req, 200, out);
}

// GET /v1/jobs: a page of the jobs in one state, each with its argument.
awaitable<Response> browse(store::QueueStore& queues, Request& req) {
  auto query = api::parse_job_browse(req.query);
  if (!query) co_return respond_error(req, query.error());
  auto page = co_await queues.browse(std::move(*query));
  if (!page) co_return respond_error(req, to_api_error(page.error()));
  json jobs = json::array();
  for (store::BrowsedJob& j : page->jobs) {
    json view = job_view(j.id.str(), j.record);
    view["argument"] = api::raw_msgpack(std::move(j.record.argument));
    jobs.push_back(std::move(view));
  }
  json out = {{"jobs", std::move(jobs)},
              {"next_cursor", page->next ? json(api::format_cursor(*page->next)) : json(nullptr)}};
  co_return respond(req, 200, out);
}

Response no_dead_job(const Request& req, std::string_view id) {
  return respond_error(req, api::ErrorCode::not_found, "no dead job " + std::string(id));
}

awaitable<Response> retry(store::QueueStore& queues, Request& req) {
  const std::string_view id_text = req.param("id");
  auto id = store::parse_job_id(id_text, queues.shards());
  if (!id) co_return no_dead_job(req, id_text);
  auto done = co_await queues.retry_dead(*id);
  if (!done) co_return respond_error(req, to_api_error(done.error()));
  co_return respond(req, 200, {{"id", id->str()}, {"state", "queued"}});
}

awaitable<Response> remove(store::QueueStore& queues, Request& req) {
  const std::string_view id_text = req.param("id");
  auto id = store::parse_job_id(id_text, queues.shards());
  if (!id) co_return no_dead_job(req, id_text);
  auto done = co_await queues.delete_dead(*id);
  if (!done) co_return respond_error(req, to_api_error(done.error()));
  co_return respond_no_content();
}

awaitable<Response> stats(store::QueueStore& queues, std::chrono::steady_clock::time_point start,
                          Request& req) {
  auto s = co_await queues.stats();
  if (!s) co_return respond_error(req, to_api_error(s.error()));
  const auto up = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  co_return respond(req, 200,
                    {{"pushed", s->pushed},
                     {"succeeded", s->succeeded},
                     {"failed", s->failed},
                     {"retried", s->retried},
                     {"dead", s->dead},
                     {"ready", s->ready},
                     {"scheduled", s->scheduled},
                     {"running", s->running},
                     {"workers", s->workers},
                     {"uptime_seconds", static_cast<double>(up.count()) / 1000.0}});
}

}  // namespace

void add_queue_routes(Router& router, store::QueueStore& queues,
                      std::function<void()> on_paused_changed) {
  const auto start = std::chrono::steady_clock::now();
  const Roles admin_only = {Role::admin};
  router.add(Method::get, "/v1/queues", admin_only,
             [&queues](Request& r) { return list(queues, r); });
  router.add(Method::get, "/v1/queues/{name}", admin_only,
             [&queues](Request& r) { return get(queues, r); });
  router.add(Method::post, "/v1/queues/{name}/pause", admin_only,
             [&queues, on_paused_changed](Request& r) {
               return set_paused(queues, on_paused_changed, r, true);
             });
  router.add(Method::post, "/v1/queues/{name}/resume", admin_only,
             [&queues, on_paused_changed](Request& r) {
               return set_paused(queues, on_paused_changed, r, false);
             });
  router.add(Method::get, "/v1/jobs", admin_only,
             [&queues](Request& r) { return browse(queues, r); });
  router.add(Method::get, "/v1/dead", admin_only,
             [&queues](Request& r) { return dead(queues, r); });
  router.add(Method::post, "/v1/dead/{id}/retry", admin_only,
             [&queues](Request& r) { return retry(queues, r); });
  router.add(Method::del, "/v1/dead/{id}", admin_only,
             [&queues](Request& r) { return remove(queues, r); });
  router.add(Method::get, "/v1/stats", admin_only,
             [&queues, start](Request& r) { return stats(queues, start, r); });
}

}  // namespace jq::http
