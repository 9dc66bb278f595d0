// Masters whose machines' clocks disagree: every job time follows the clock of Redis.
#include <catch2/catch.hpp>

#include "tests/support/daemon.hpp"
#include "tests/support/job_calls.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/worker.hpp"

using namespace std::chrono_literals;
using jq::test::Daemon;
using jq::test::RedisServer;
using jq::test::wait_until;
using jq::test::Worker;
using nlohmann::json;

namespace {

// jq_clock_offset_seconds as GET /metrics shows it.
double clock_offset(const jq::test::HttpClient& http) {
  const std::string text = http.get("/metrics").body;
  const std::string key = "\njq_clock_offset_seconds ";
  const auto at = text.find(key);
  REQUIRE(at != std::string::npos);
  return std::stod(text.substr(at + key.size()));
}

}  // namespace

// Every master reaps the attempts of any master past their deadline (their master died). The
// deadline was written on one master's clock and the cutoff read on another's: a master whose
// clock ran 30 s ahead took a running job of 20 s timeout at once, and the job ran twice.
TEST_CASE("a master whose clock runs ahead leaves other masters' running jobs alone", "[http]") {
  RedisServer redis;
  Daemon first({.redis_url = redis.url()});
  Worker worker;
  jq::test::register_worker(first.http(), worker, {"slow"}, 1);
  const std::string id = jq::test::push(first.http(), {{"name", "slow"},
                                                       {"max_retry", 1},
                                                       {"timeout", 20},
                                                       {"keep_result", true},
                                                       {"argument", {{"sleep_ms", 8000}}}});
  REQUIRE(wait_until([&] { return worker.stats()["received"] == 1; }, 5s));

  Daemon ahead({.redis_url = redis.url(), .env = jq::test::clock_offset_env(30)});
  CHECK(ahead.logged("s ahead of the clock of Redis", 5s));
  const double offset = clock_offset(ahead.http());
  CHECK(offset > 29.5);
  CHECK(offset < 30.5);
  CHECK(std::abs(clock_offset(first.http())) < 0.5);
  // Still running once the master ahead keeps time (else the test could not fail).
  CHECK(first.http().get("/v1/jobs/" + id).value()["state"] == "running");

  REQUIRE(wait_until(
      [&] { return first.http().get("/v1/jobs/" + id).value()["state"] == "succeeded"; }, 15s));
  CHECK(worker.stats()["received"] == 1);
  CHECK(worker.stats()["by_job"][id] == json::array({1}));  // its first attempt, once
}
