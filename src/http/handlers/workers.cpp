#include "src/http/handlers/workers.hpp"

#include "api/field_values.hpp"
#include "api/worker_registration.hpp"
#include "src/dispatch/tls_contexts.hpp"
#include "src/http/handlers/store_errors.hpp"
#include "src/http/respond.hpp"
#include "src/util/time.hpp"

namespace jq::http {
namespace {

using nlohmann::json;

json worker_view(const workers::Endpoint& e, const workers::EndpointStats& s) {
  json names = json::array();
  if (e.all_names) names.push_back("*");
  for (const auto& n : e.names) names.push_back(n);
  json headers = json::object();
  for (const auto& [k, v] : e.headers) headers[k] = v;
  return {{"id", e.id},
          {"url", e.url},
          {"names", names},
          {"concurrency", e.concurrency},
          {"headers", headers},
          {"ca_file", e.ca_file.empty() ? json(nullptr) : json(e.ca_file)},
          {"ttl", e.ttl_ms > 0 ? json(static_cast<double>(e.ttl_ms) / 1000.0) : json(nullptr)},
          {"registered_at", iso8601_utc(e.registered_at_ms)},
          {"expires_at", e.expires_at_ms > 0 ? json(iso8601_utc(e.expires_at_ms)) : json(nullptr)},
          {"inflight", s.inflight},
          {"healthy", s.healthy},
          {"dispatched", s.dispatched},
          {"succeeded", s.succeeded},
          {"failed", s.failed},
          {"last_error", s.last_error.empty() ? json(nullptr) : json(s.last_error)},
          {"busy_until", s.busy_until_ms > 0 ? json(iso8601_utc(s.busy_until_ms)) : json(nullptr)},
          {"signed", !e.secret.empty()}};  // whether, never with what
}

asio::awaitable<Response> add(workers::WorkerStore& store, const std::function<void()>& changed,
                              Request& req) {
  auto type = api::parse_content_type(req.content_type);
  if (!type) {
    co_return respond_error(req, api::ErrorCode::unsupported_media_type,
                            "send the registration as application/msgpack or application/json");
  }
  auto registration = api::decode_worker_registration(req.body, *type);
  if (!registration) co_return respond_error(req, registration.error());
  // Read now, so that a path the master cannot use is refused rather than making the endpoint
  // unreachable later.
  if (!registration->ca_file.empty()) {
    if (auto loaded = dispatch::check_ca_file(registration->ca_file); !loaded) {
      co_return respond_error(req, api::field_error("ca_file", "ca_file " + loaded.error()));
    }
  }
  auto added = co_await store.add(std::move(*registration));
  if (!added) co_return respond_error(req, to_api_error(added.error()));
  changed();
  co_return respond(req, added->created ? 201 : 200, {{"id", added->id}});
}

// Every registration with its shared counters, or only the one in the path (404 when unknown).
asio::awaitable<Response> list(workers::WorkerStore& store, Request& req, bool one) {
  auto views = co_await store.load_with_stats();
  if (!views) co_return respond_error(req, to_api_error(views.error()));
  json out = json::array();
  for (const auto& v : *views) {
    if (!one) {
      out.push_back(worker_view(v.endpoint, v.stats));
    } else if (v.endpoint.id == req.param("id")) {
      co_return respond(req, 200, worker_view(v.endpoint, v.stats));
    }
  }
  if (one) {
    co_return respond_error(req, api::ErrorCode::not_found,
                            "no worker " + std::string(req.param("id")));
  }
  co_return respond(req, 200, out);
}

asio::awaitable<Response> remove(workers::WorkerStore& store, const std::function<void()>& changed,
                                 Request& req) {
  auto removed = co_await store.remove(std::string(req.param("id")));
  if (!removed) co_return respond_error(req, to_api_error(removed.error()));
  changed();
  co_return respond_no_content();
}

}  // namespace

void add_worker_routes(Router& router, workers::WorkerStore& workers,
                       std::function<void()> on_changed) {
  const Roles workers_only = {Role::worker};  // register and heartbeat
  const Roles admin_only = {Role::admin};
  router.add(Method::post, "/v1/workers", workers_only,
             [&workers, on_changed](Request& r) { return add(workers, on_changed, r); });
  router.add(Method::get, "/v1/workers", admin_only,
             [&workers](Request& r) { return list(workers, r, false); });
  router.add(Method::get, "/v1/workers/{id}", admin_only,
             [&workers](Request& r) { return list(workers, r, true); });
  router.add(Method::del, "/v1/workers/{id}", admin_only,
             [&workers, on_changed](Request& r) { return remove(workers, on_changed, r); });
}

}  // namespace jq::http
