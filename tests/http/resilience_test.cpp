// Redis going away and coming back while the daemon runs; scripts flushed from Redis.
#include <catch2/catch.hpp>

#include <csignal>

#include "tests/support/daemon.hpp"
#include "tests/support/redis_server.hpp"

using namespace std::chrono_literals;
using jq::test::Daemon;
using jq::test::DaemonOptions;
using jq::test::RedisServer;
using jq::test::SyncRedis;
using jq::test::wait_until;
using nlohmann::json;

TEST_CASE("while Redis is down requests get 503 and the daemon recovers when it returns",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  const std::string before = http.post("/v1/jobs", {{"name", "kept"}}).value()["id"];

  redis.stop();
  auto down = http.post("/v1/jobs", {{"name", "n"}});
  CHECK(down.status == 503);
  CHECK(down.value()["error"] == "unavailable");
  CHECK(down.header("retry-after") == "1");
  CHECK(http.get("/v1/jobs/" + before).status == 503);
  CHECK(http.get("/readyz").status == 503);
  CHECK(http.get("/healthz").status == 200);

  redis.start();
  REQUIRE(wait_until([&] { return daemon.ready(); }, 10s));
  CHECK(http.get("/v1/jobs/" + before).value()["state"] == "queued");  // nothing lost
  CHECK(http.post("/v1/jobs", {{"name", "after"}}).status == 201);
  CHECK(daemon.wait_exit(0ms) == std::nullopt);  // never crashed
}

TEST_CASE("scripts flushed from Redis are sent again (NOSCRIPT)", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  SyncRedis(redis.port()).call({"SCRIPT", "FLUSH"});
  auto pushed = http.post("/v1/jobs", {{"name", "n"}});
  REQUIRE(pushed.status == 201);
  const std::string id = pushed.value()["id"];
  SyncRedis(redis.port()).call({"SCRIPT", "FLUSH"});
  CHECK(http.get("/v1/jobs/" + id).status == 200);
  CHECK(daemon.log().find("sending it again") != std::string::npos);
}

TEST_CASE("SIGTERM stops the daemon cleanly with exit code 0", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  CHECK(daemon.http().post("/v1/jobs", {{"name", "n"}}).status == 201);
  CHECK(daemon.stop(SIGTERM, 15s) == 0);
  CHECK(daemon.log().find("jqmaster stopped") != std::string::npos);
}
