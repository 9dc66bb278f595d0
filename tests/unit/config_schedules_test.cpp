// The `schedules` section: each entry is a schedule as POST /v1/schedules takes it, held to the
// API's rules, with errors naming the key under the entry.
#include <catch2/catch.hpp>

#include "src/config/config.hpp"
#include "tests/unit/config_test_support.hpp"

using namespace jq::config;
using jq::config::test::yaml_error;

TEST_CASE("schedules are absent by default and may be an empty list", "[unit]") {
  CHECK(parse_yaml("listen: 127.0.0.1:1").schedules.empty());
  CHECK(parse_yaml("schedules: []").schedules.empty());
}

TEST_CASE("a schedule in the config keeps every value the API would", "[unit]") {
  const Config config = parse_yaml(R"(
schedules:
  - name: nightly-report
    cron: "30 2 * * *"
    timezone: Europe/Berlin
    job: {name: report.build, argument: {kind: nightly}, priority: 5, timeout: 600}
    overlap: skip
    missed: skip
    start_at: "2026-12-01T00:00:00Z"
  - {name: heartbeat, every: 30, job: {name: ping}, paused: true}
)");
  REQUIRE(config.schedules.size() == 2);
  const auto& s = config.schedules[0];
  CHECK(s.cron == "30 2 * * *");
  CHECK(s.timezone == "Europe/Berlin");
  CHECK(s.overlap == jq::api::Overlap::skip);
  CHECK(s.missed == jq::api::MissedPolicy::skip);
  CHECK(s.start_at->ms == 1796083200000);
  const auto job = jq::api::template_job(s, jq::api::JobDefaults{});
  REQUIRE(job);
  CHECK(job->name == "report.build");
  CHECK(job->priority == 5);
  CHECK(config.schedules[1].every_s == 30);
  CHECK(config.schedules[1].paused);
}

TEST_CASE("a bad schedule names its key under schedules[i]", "[unit]") {
  const auto cron = yaml_error("schedules: [{name: a, cron: '61 * * * *', job: {name: x}}]");
  CHECK(cron.key == "schedules[0].cron");
  CHECK_THAT(cron.message, Catch::Contains("61"));
  const auto priority = yaml_error(
      "schedules:\n"
      "  - {name: a, every: 5, job: {name: x}}\n"
      "  - {name: b, every: 5, job: {name: x, priority: high}}\n");
  CHECK(priority.key == "schedules[1].job.priority");
  CHECK(yaml_error("schedules: [{name: a, every: 5, timezone: Nowhere, job: {name: x}}]").key ==
        "schedules[0].timezone");
  CHECK(yaml_error("schedules: [{name: a, job: {name: x}}]").key == "schedules[0].cron");
  CHECK(yaml_error("schedules: [{name: a, every: 5, job: {name: x}},"
                   " {name: a, every: 6, job: {name: y}}]")
            .key == "schedules[1].name");
  CHECK(yaml_error("schedules: [5]").key == "schedules[0]");
  CHECK(yaml_error("schedules: {name: a}").key == "schedules");
}
