// The `constraints` section: each entry is a constraint as POST /v1/constraints takes it, held to
// the API's rules, with errors naming the key under the entry.
#include <catch2/catch.hpp>

#include "src/config/config.hpp"
#include "tests/unit/config_test_support.hpp"

using namespace jq::config;
using jq::config::test::yaml_error;
using namespace std::chrono_literals;

TEST_CASE("constraints are absent by default and may be an empty list", "[unit]") {
  CHECK(parse_yaml("listen: 127.0.0.1:1").constraints.empty());
  CHECK(parse_yaml("constraints: []").constraints.empty());
  CHECK(parse_yaml("constraints:").constraints.empty());
}

TEST_CASE("a constraint in the config keeps every value the API would", "[unit]") {
  const Config config = parse_yaml(R"(
constraints:
  - name: mail-per-tenant
    match:
      name: "mail.*"
      argument:
        - {path: /kind, equals: newsletter}
        - {path: /tenant, exists: true}
        - {path: /region, in: [eu, us]}
        - {path: /count, equals: 3}
        - {path: /quoted, equals: "3"}
        - {path: /none, equals: null}
    key: /tenant
    concurrency: 5
    rate: {limit: 100, period: 0.5, burst: 10}
  - {name: everything, match: {name: "*"}, paused: true}
)");
  REQUIRE(config.constraints.size() == 2);
  const auto& c = config.constraints[0];
  const auto expected = jq::api::decode_constraint(
      R"({"name":"mail-per-tenant","match":{"name":"mail.*","argument":[)"
      R"({"path":"/kind","equals":"newsletter"},{"path":"/tenant","exists":true},)"
      R"({"path":"/region","in":["eu","us"]},{"path":"/count","equals":3},)"
      R"({"path":"/quoted","equals":"3"},{"path":"/none","equals":null}]},)"
      R"("key":"/tenant","concurrency":5,"rate":{"limit":100,"period":0.5,"burst":10}})",
      jq::api::MediaType::json);
  REQUIRE(expected);
  CHECK(c == *expected);
  CHECK(c.rate->period == 500ms);
  CHECK(config.constraints[1].name == "everything");
  CHECK(config.constraints[1].paused);
}

TEST_CASE("a bad constraint names its key under constraints[i]", "[unit]") {
  const auto period =
      yaml_error("constraints: [{name: a, match: {name: '*'}, rate: {limit: 1, period: 0}}]");
  CHECK(period.key == "constraints[0].rate.period");
  CHECK(period.message ==
        "config: constraints[0].rate.period: must be a number of seconds greater than 0 and at "
        "most 31536000, got 0");
  const auto path = yaml_error(
      "constraints:\n"
      "  - {name: a, match: {name: '*'}}\n"
      "  - {name: b, match: {name: '*', argument: [{path: /a, exists: true}, {path: x, exists: "
      "true}]}}\n");
  CHECK(path.key == "constraints[1].match.argument[1].path");
  CHECK(yaml_error("constraints: [{match: {name: '*'}}]").key == "constraints[0].name");
  CHECK(yaml_error("constraints: [{name: a}]").key == "constraints[0].match");
  CHECK(yaml_error("constraints: [{name: a, match: {name: '*'}, limit: 3}]").key ==
        "constraints[0].limit");
  CHECK(yaml_error("constraints: [{name: a, match: {name: '*'}, concurrency: '5'}]").key ==
        "constraints[0].concurrency");
  CHECK(yaml_error("constraints: [{name: 'a b', match: {name: '*'}}]").key ==
        "constraints[0].name");
  CHECK(yaml_error("constraints: [a]").key == "constraints[0]");
  CHECK(yaml_error("constraints: {name: a}").key == "constraints");
}

TEST_CASE("a constraint listed twice in the config is refused", "[unit]") {
  const auto error =
      yaml_error("constraints: [{name: a, match: {name: '*'}}, {name: a, match: {name: 'b'}}]");
  CHECK(error.key == "constraints[1].name");
  CHECK(error.message.find("repeats constraints[0].name") != std::string::npos);
}

TEST_CASE("YAML scalars become typed values only when plain", "[unit]") {
  const Config config = parse_yaml(R"(
constraints:
  - name: typed
    match:
      name: "*"
      argument:
        - {path: /a, in: [true, "true", 1, "1", 1.5, ~, "", 18446744073709551615, .nan]}
)");
  const auto& values = config.constraints.at(0).match.argument.at(0).values;
  REQUIRE(values.size() == 9);
  CHECK(values[0] == "\xc3");
  CHECK(values[1] == "\xa4true");
  CHECK(values[2] == "\x01");
  CHECK(values[3] ==
        "\xa1"
        "1");
  CHECK(values[4] == std::string("\xcb\x3f\xf8\0\0\0\0\0\0", 9));
  CHECK(values[5] == "\xc0");
  CHECK(values[6] == "\xa0");
  CHECK(values[7] == "\xcf\xff\xff\xff\xff\xff\xff\xff\xff");
  CHECK(values[8] == "\xa4.nan");
}
