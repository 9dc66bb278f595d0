// The `metrics` section: its one key, its default, and the same strict checks as every section.
#include <catch2/catch.hpp>

#include "src/config/config.hpp"
#include "tests/unit/config_test_support.hpp"

using namespace jq::config;
using jq::config::test::yaml_error;

TEST_CASE("metrics.max_job_names defaults to 100 and is read when given", "[unit]") {
  CHECK(parse_yaml("").metrics == Metrics{100});
  CHECK(parse_yaml("metrics:").metrics == Metrics{100});
  CHECK(parse_yaml("metrics: {max_job_names: 1}").metrics == Metrics{1});
  CHECK(parse_yaml("metrics:\n  max_job_names: 10000\n").metrics == Metrics{10000});
}

TEST_CASE("metrics.max_job_names out of range or of the wrong type names its key", "[unit]") {
  for (const char* yaml : {"metrics: {max_job_names: 0}", "metrics: {max_job_names: 10001}",
                           "metrics: {max_job_names: -5}", "metrics: {max_job_names: 2.5}",
                           "metrics: {max_job_names: \"100\"}", "metrics: {max_job_names: []}"}) {
    INFO(yaml);
    const auto raised = yaml_error(yaml);
    CHECK(raised.key == "metrics.max_job_names");
    CHECK(raised.message.find("between 1 and 10000") != std::string::npos);
  }
}

TEST_CASE("an unknown key inside metrics is named", "[unit]") {
  CHECK(yaml_error("metrics: {max_names: 5}").key == "metrics.max_names");
  CHECK(yaml_error("metrics: 5").key == "metrics");
}
