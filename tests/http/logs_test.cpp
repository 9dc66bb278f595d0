// log.format: json writes one JSON object per line, with job fields on job events; log.access
// adds a line per request.
#include <catch2/catch.hpp>

#include <sstream>

#include "tests/support/daemon.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/worker.hpp"

using namespace std::chrono_literals;
using jq::test::Daemon;
using jq::test::RedisServer;
using jq::test::wait_until;
using jq::test::Worker;
using nlohmann::json;

namespace {

std::vector<json> json_lines(const std::string& log) {
  std::vector<json> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(json::parse(line));  // throws (fails) on a non-JSON line
  }
  return lines;
}

}  // namespace

TEST_CASE("JSON logs carry job fields on job events and an access line per request", "[http]") {
  RedisServer redis;
  Worker worker;
  Daemon daemon({redis.url(), 4,
                 "log:\n  format: json\n  level: debug\n  access: true\nretry:\n  base: 0.05\n"});
  auto http = daemon.http();
  REQUIRE(http.post("/v1/workers", {{"url", worker.url()}, {"names", {"*"}}}).status == 201);
  auto pushed = http.post(
      "/v1/jobs", {{"name", "mail.send"}, {"argument", {{"fail", true}}}, {"max_retry", 0}});
  const std::string id = pushed.value()["id"];
  REQUIRE(wait_until([&] { return http.get("/v1/jobs/" + id).value()["state"] == "dead"; }, 10s));

  json attempt, access;
  REQUIRE(wait_until(
      [&] {
        for (const json& line : json_lines(daemon.log())) {
          CHECK(line.contains("time"));
          CHECK(line.contains("level"));
          CHECK(line.contains("message"));
          if (line["message"] == "job attempt" && line.value("job_id", "") == id) attempt = line;
          if (line["message"] == "http request" && line.value("path", "") == "/v1/jobs") {
            access = line;
          }
        }
        return !attempt.is_null() && !access.is_null();
      },
      5s));
  CHECK(attempt["name"] == "mail.send");
  CHECK(attempt["attempt"] == 1);
  CHECK(attempt["endpoint"] == worker.url());
  CHECK(attempt["outcome"] == "dead");
  CHECK(attempt["latency_ms"].is_number());
  CHECK(attempt["level"] == "info");
  CHECK(access["method"] == "POST");
  CHECK(access["status"] == 201);
  CHECK(access["duration_ms"].is_number());
}
