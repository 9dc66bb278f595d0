#include "src/http/handlers/health.hpp"

#include "src/http/handlers/store_errors.hpp"
#include "src/http/respond.hpp"

namespace jq::http {

void add_health_routes(Router& router, store::QueueStore& store, const store::JobStore& pushes,
                       const std::atomic<bool>& stopping) {
  router.add(Method::get, "/healthz", [](Request& req) -> asio::awaitable<Response> {
    co_return respond(req, 200, {{"status", "ok"}});
  });
  router.add(
      Method::get, "/readyz",
      [&store, &pushes, &stopping](Request& req) -> asio::awaitable<Response> {
        if (stopping) {
          co_return respond_error(req, api::ErrorCode::unavailable, "the master is shutting down");
        }
        auto pong = co_await store.ping();
        if (!pong) co_return respond_error(req, to_api_error(pong.error()));
        if (!pushes.connected()) {
          co_return respond_error(req, api::ErrorCode::unavailable,
                                  "the connection for pushes confirmed by replicas "
                                  "(redis.replicas_ack) is not up yet: it is being made again");
        }
        co_return respond(req, 200, {{"status", "ready"}});
      });
}

}  // namespace jq::http
