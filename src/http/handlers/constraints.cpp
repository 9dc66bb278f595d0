#include "src/http/handlers/constraints.hpp"

#include "api/constraint.hpp"
#include "src/http/handlers/store_errors.hpp"
#include "src/http/respond.hpp"
#include "src/util/time.hpp"

namespace jq::http {
namespace {

using asio::awaitable;
using nlohmann::json;
using ChangedHook = std::function<awaitable<void>()>;

json key_view(const store::ConstraintKeyState& k) {
  return {{"key", k.key},
          {"waiting", k.waiting},
          {"running", k.running},
          {"next_start_at",
           k.next_start_at_ms ? json(iso8601_utc(*k.next_start_at_ms)) : json(nullptr)}};
}

// The object plus its live state (the contract's GET /v1/constraints/{name}).
json state_view(const api::Constraint& c, const store::ConstraintLiveState& s) {
  json out = api::constraint_view(c);
  json top = json::array();
  for (const auto& k : s.top_keys) top.push_back(key_view(k));
  out["waiting"] = s.waiting;
  out["running"] = s.running;
  out["keys"] = s.keys;
  out["top_keys"] = std::move(top);
  return out;
}

std::optional<api::MediaType> body_type(const Request& req) {
  return api::parse_content_type(req.content_type);
}

Response unsupported(const Request& req) {
  return respond_error(req, api::ErrorCode::unsupported_media_type,
                       "send the constraint as application/msgpack or application/json");
}

awaitable<Response> create(store::ConstraintStore& store, const ChangedHook& changed,
                           Request& req) {
  const auto type = body_type(req);
  if (!type) co_return unsupported(req);
  auto c = api::decode_constraint(req.body, *type);
  if (!c) co_return respond_error(req, c.error());
  auto created = co_await store.create(std::move(*c));
  if (!created) co_return respond_error(req, to_api_error(created.error()));
  co_await changed();
  co_return respond(req, 201, api::constraint_view(*created));
}

awaitable<Response> list(store::ConstraintStore& store, Request& req) {
  auto all = co_await store.list();
  if (!all) co_return respond_error(req, to_api_error(all.error()));
  json out = json::array();
  for (const auto& c : *all) out.push_back(api::constraint_view(c));
  co_return respond(req, 200, out);
}

awaitable<Response> get(store::ConstraintStore& store, store::ConstraintCache& cache,
                        Request& req) {
  auto c = co_await store.get(std::string(req.param("name")));
  if (!c) co_return respond_error(req, to_api_error(c.error()));
  // Made by another master, whose event may not have reached this one yet: once this master
  // shows it, its pushes match it (a client that sees it here may push here next).
  if (cache.current()->find(c->name) == nullptr) co_await cache.reload();
  auto state = co_await store.live_state(*c);
  if (!state) co_return respond_error(req, to_api_error(state.error()));
  co_return respond(req, 200, state_view(*c, *state));
}

awaitable<Response> replace(store::ConstraintStore& store, const ChangedHook& changed,
                            Request& req) {
  const auto type = body_type(req);
  if (!type) co_return unsupported(req);
  auto c = api::decode_constraint_replace(req.body, *type, req.param("name"));
  if (!c) co_return respond_error(req, c.error());
  auto replaced = co_await store.replace(std::move(*c));
  if (!replaced) co_return respond_error(req, to_api_error(replaced.error()));
  co_await changed();
  co_return respond(req, 200, api::constraint_view(*replaced));
}

awaitable<Response> patch(store::ConstraintStore& store, const ChangedHook& changed, Request& req) {
  const auto type = body_type(req);
  if (!type) co_return unsupported(req);
  auto p = api::decode_constraint_patch(req.body, *type, req.param("name"));
  if (!p) co_return respond_error(req, p.error());
  auto patched = co_await store.patch(std::string(req.param("name")), std::move(*p));
  if (!patched) co_return respond_error(req, to_api_error(patched.error()));
  co_await changed();
  co_return respond(req, 200, api::constraint_view(*patched));
}

awaitable<Response> remove(store::ConstraintStore& store, const ChangedHook& changed,
                           Request& req) {
  auto removed = co_await store.remove(std::string(req.param("name")));
  if (!removed) co_return respond_error(req, to_api_error(removed.error()));
  co_await changed();
  co_return respond_no_content();
}

}  // namespace

void add_constraint_routes(Router& router, store::ConstraintStore& constraints,
                           store::ConstraintCache& cache,
                           std::function<awaitable<void>()> on_changed) {
  const Roles admin_only = {Role::admin};
  auto& s = constraints;
  router.add(Method::post, "/v1/constraints", admin_only,
             [&s, on_changed](Request& r) { return create(s, on_changed, r); });
  router.add(Method::get, "/v1/constraints", admin_only, [&s](Request& r) { return list(s, r); });
  router.add(Method::get, "/v1/constraints/{name}", admin_only,
             [&s, &cache](Request& r) { return get(s, cache, r); });
  router.add(Method::put, "/v1/constraints/{name}", admin_only,
             [&s, on_changed](Request& r) { return replace(s, on_changed, r); });
  router.add(Method::patch, "/v1/constraints/{name}", admin_only,
             [&s, on_changed](Request& r) { return patch(s, on_changed, r); });
  router.add(Method::del, "/v1/constraints/{name}", admin_only,
             [&s, on_changed](Request& r) { return remove(s, on_changed, r); });
}

}  // namespace jq::http
