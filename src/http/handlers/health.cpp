#include "src/http/handlers/health.hpp"

#include "src/http/respond.hpp"

namespace jq::http {

void add_health_routes(Router& router, redis::Client& redis, const std::atomic<bool>& stopping) {
  router.add(Method::get, "/healthz", [](Request& req) -> asio::awaitable<Response> {
    co_return respond(req, 200, {{"status", "ok"}});
  });
  router.add(
      Method::get, "/readyz", [&redis, &stopping](Request& req) -> asio::awaitable<Response> {
        if (stopping) {
          co_return respond_error(req, api::ErrorCode::unavailable, "the master is shutting down");
        }
        std::vector<std::string> ping{"PING"};
        auto pong = co_await redis.command(std::move(ping));
        if (!pong || pong->is_error()) {
          co_return respond_error(req, api::ErrorCode::unavailable,
                                  "Redis does not answer (" +
                                      (pong ? pong->str : pong.error().message()) +
                                      "); the master keeps retrying");
        }
        co_return respond(req, 200, {{"status", "ready"}});
      });
}

}  // namespace jq::http
