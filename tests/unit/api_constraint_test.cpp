// Constraint bodies (POST, PUT, PATCH) decoded and validated, every error naming its field by
// its whole path; and the object encoded back, which is also how it is stored.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "api/body.hpp"
#include "api/constraint.hpp"
#include "api/json_pointer.hpp"
#include "api/schedule.hpp"
#include "api_test_msgpack.hpp"

using jq::api::ApiError;
using jq::api::ConditionKind;
using jq::api::Constraint;
using jq::api::ConstraintPatch;
using jq::api::ErrorCode;
using jq::api::MediaType;
using jq::api::test::Mp;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

using Result = jq::Expected<Constraint, ApiError>;

Result create_json(const std::string& text) {
  return jq::api::decode_constraint(text, MediaType::json);
}

// A valid constraint with one top-level field added or replaced (JSON text of the value).
std::string with(std::string_view field, std::string_view value) {
  json body = {{"name", "c1"}, {"match", {{"name", "mail.*"}}}};
  body[std::string(field)] = json::parse(value);
  return body.dump();
}

// A valid constraint whose match has the given argument conditions (JSON text of the array).
std::string with_conditions(std::string_view conditions) {
  return R"({"name":"c1","match":{"name":"*","argument":)" + std::string(conditions) + "}}";
}

void check_error(const Result& result, std::string_view field, std::string_view message_part,
                 ErrorCode code = ErrorCode::invalid_job) {
  REQUIRE_FALSE(result);
  CHECK(result.error().code == code);
  if (field.empty()) {
    CHECK_FALSE(result.error().field);
  } else {
    CHECK(result.error().field == std::string(field));
  }
  CHECK_THAT(result.error().message, Catch::Contains(std::string(message_part)));
}

}  // namespace

TEST_CASE("a minimal constraint takes the defaults", "[unit]") {
  const auto c = create_json(R"({"name":"mail","match":{"name":"*"}})");
  REQUIRE(c);
  CHECK(c->name == "mail");
  CHECK(c->match.name_glob == "*");
  CHECK(c->match.argument.empty());
  CHECK_FALSE(c->key);
  CHECK_FALSE(c->concurrency);
  CHECK_FALSE(c->rate);
  CHECK_FALSE(c->paused);
}

TEST_CASE("a constraint with every field keeps every value, in both encodings", "[unit]") {
  const std::string text =
      R"({"name":"mail-per-tenant","match":{"name":"mail.*","argument":[)"
      R"({"path":"/kind","equals":"newsletter"},{"path":"/tenant","exists":true},)"
      R"({"path":"/region","in":["eu","us"]}]},"key":"/tenant","concurrency":5,)"
      R"("rate":{"limit":100,"period":60,"burst":10},"paused":true})";
  // clang-format off
  const std::string mp = Mp()
      .map(6)
          .str("name").str("mail-per-tenant")
          .str("match").map(2)
              .str("name").str("mail.*")
              .str("argument").array(3)
                  .map(2).str("path").str("/kind").str("equals").str("newsletter")
                  .map(2).str("path").str("/tenant").str("exists").boolean(true)
                  .map(2).str("path").str("/region").str("in").array(2).str("eu").str("us")
          .str("key").str("/tenant")
          .str("concurrency").i(5)
          .str("rate").map(3).str("limit").i(100).str("period").i(60).str("burst").i(10)
          .str("paused").boolean(true);
  // clang-format on
  for (const auto& c : {create_json(text), jq::api::decode_constraint(mp, MediaType::msgpack)}) {
    REQUIRE(c);
    CHECK(c->name == "mail-per-tenant");
    CHECK(c->match.name_glob == "mail.*");
    REQUIRE(c->match.argument.size() == 3);
    CHECK(c->match.argument[0].path.tokens == std::vector<std::string>{"kind"});
    CHECK(c->match.argument[0].kind == ConditionKind::equals);
    CHECK(c->match.argument[0].values == std::vector<std::string>{Mp().str("newsletter")});
    CHECK(c->match.argument[1].kind == ConditionKind::exists);
    CHECK(c->match.argument[1].exists);
    CHECK(c->match.argument[2].kind == ConditionKind::in);
    CHECK(c->match.argument[2].values == std::vector<std::string>{Mp().str("eu"), Mp().str("us")});
    REQUIRE(c->key);
    CHECK(c->key->text == "/tenant");
    CHECK(c->concurrency == 5);
    REQUIRE(c->rate);
    CHECK(c->rate->limit == 100);
    CHECK(c->rate->period == 60'000ms);
    CHECK(c->rate->burst == 10);
    CHECK(c->paused);
  }
}

TEST_CASE("null for key, concurrency or rate is the same as leaving it out", "[unit]") {
  const auto c =
      create_json(R"({"name":"c","match":{"name":"*"},"key":null,"concurrency":null,"rate":null})");
  REQUIRE(c);
  CHECK_FALSE(c->key);
  CHECK_FALSE(c->concurrency);
  CHECK_FALSE(c->rate);
}

TEST_CASE("name and match are required", "[unit]") {
  check_error(create_json(R"({"match":{"name":"*"}})"), "name", "name is required");
  check_error(create_json(R"({"name":"c"})"), "match", "match is required");
  check_error(create_json(R"({"name":"c","match":{}})"), "match.name", "match.name is required");
  check_error(create_json(R"({"name":"c","match":{"name":"*"},"rate":{"limit":1}})"), "rate.period",
              "rate.period is required");
  check_error(create_json(R"({"name":"c","match":{"name":"*"},"rate":{"period":1}})"), "rate.limit",
              "rate.limit is required");
}

TEST_CASE("every bad value is refused naming its field", "[unit]") {
  struct Bad {
    std::string field;  // the top-level field given
    std::string value;  // its JSON
    std::string named;  // the field the error names
    std::string message;
  };
  const Bad bads[] = {
      {"name", R"("")", "name", "name must be 1-128 bytes of A-Z a-z 0-9 _ . : -, got \"\""},
      {"name", R"("a b")", "name", "got \"a b\""},
      {"name", R"("a/b")", "name", "got \"a/b\""},
      {"name", "\"" + std::string(129, 'x') + "\"", "name", "1-128 bytes"},
      {"name", "5", "name", "name must be a string, got 5"},
      {"match", R"("mail")", "match", "match must be a map {name, argument}, got \"mail\""},
      {"match", "null", "match", "match must be a map"},
      {"match", R"({"name":""})", "match.name", "match.name must be a pattern"},
      {"match", R"({"name":"mail/*"})", "match.name", "got \"mail/*\""},
      {"match", R"({"name":5})", "match.name", "match.name must be a string"},
      {"match", R"({"name":"*","nam":1})", "match.nam",
       "unknown field \"nam\" in match: allowed fields are name, argument"},
      {"match", R"({"name":"*","argument":{}})", "match.argument",
       "match.argument must be an array of at most 32 conditions"},
      {"key", R"("tenant")", "key", "key must be a JSON Pointer"},
      {"key", R"("/a~2")", "key", "got \"/a~2\""},
      {"key", R"("/a~")", "key", "JSON Pointer"},
      {"key", "5", "key", "key must be a string, got 5"},
      {"concurrency", "0", "concurrency",
       "concurrency must be an integer between 1 and 100000, got 0"},
      {"concurrency", "100001", "concurrency", "got 100001"},
      {"concurrency", "1.5", "concurrency", "got 1.5"},
      {"concurrency", R"("5")", "concurrency", "got \"5\""},
      {"rate", "5", "rate", "rate must be a map {limit, period, burst}, got 5"},
      {"rate", R"({"limit":0,"period":1})", "rate.limit",
       "rate.limit must be an integer between 1 and 1000000, got 0"},
      {"rate", R"({"limit":1000001,"period":1})", "rate.limit", "got 1000001"},
      {"rate", R"({"limit":1,"period":0})", "rate.period",
       "rate.period must be a number of seconds greater than 0 and at most 31536000, got 0"},
      {"rate", R"({"limit":1,"period":-1})", "rate.period", "got -1"},
      {"rate", R"({"limit":1,"period":31536001})", "rate.period", "got 31536001"},
      {"rate", R"({"limit":1,"period":"60"})", "rate.period", "got \"60\""},
      {"rate", R"({"limit":1,"period":1,"burst":-1})", "rate.burst",
       "rate.burst must be an integer between 0 and 1000000, got -1"},
      {"rate", R"({"limit":1,"period":1,"burst":1.5})", "rate.burst", "got 1.5"},
      {"rate", R"({"limit":1,"period":1,"bursts":1})", "rate.bursts",
       "unknown field \"bursts\" in rate: allowed fields are limit, period, burst"},
      {"paused", "1", "paused", "paused must be true or false, got 1"},
      {"paused", "null", "paused", "got null"},
      {"limit", "5", "limit",
       "unknown field \"limit\": allowed fields are name, match, key, concurrency, rate, paused"},
  };
  for (const Bad& bad : bads) {
    INFO(bad.field << " = " << bad.value);
    check_error(create_json(with(bad.field, bad.value)), bad.named, bad.message);
  }
}

TEST_CASE("every bad argument condition is refused naming its index and field", "[unit]") {
  struct Bad {
    std::string conditions;
    std::string named;
    std::string message;
  };
  const Bad bads[] = {
      {R"([{"path":"/a","exists":true},{"path":"a","exists":true}])", "match.argument[1].path",
       "match.argument[1].path must be a JSON Pointer"},
      {R"([{"path":"/a~x","equals":1}])", "match.argument[0].path", "got \"/a~x\""},
      {R"([{"path":5,"equals":1}])", "match.argument[0].path",
       "match.argument[0].path must be a string, got 5"},
      {R"([{"equals":1}])", "match.argument[0].path", "match.argument[0].path is required"},
      {R"([{"path":"/a"}])", "match.argument[0]",
       "match.argument[0] needs one of equals, in or exists"},
      {R"([{"path":"/a","equals":1,"in":[1]}])", "match.argument[0].in",
       "must have exactly one of equals, in, exists"},
      {R"([{"path":"/a","exists":true,"equals":null}])", "match.argument[0].equals",
       "one too many"},
      {R"([{"path":"/a","in":[]}])", "match.argument[0].in",
       "match.argument[0].in must be an array of 1 to 256 values, got 0 values"},
      {R"([{"path":"/a","in":"eu"}])", "match.argument[0].in", "got \"eu\""},
      {R"([{"path":"/a","exists":"yes"}])", "match.argument[0].exists",
       "match.argument[0].exists must be true or false"},
      {R"([{"path":"/a","exists":true,"value":1}])", "match.argument[0].value",
       "unknown field \"value\" in match.argument[0]: allowed fields are path, equals, in, "
       "exists"},
      {R"([5])", "match.argument[0]",
       "match.argument[0] must be a map {path, equals | in | exists}, got 5"},
  };
  for (const Bad& bad : bads) {
    INFO(bad.conditions);
    check_error(create_json(with_conditions(bad.conditions)), bad.named, bad.message);
  }
  // JSON refuses a repeated key itself; MessagePack leaves it to the field map.
  const std::string twice = Mp().map(2)
                                .str("name")
                                .str("c")
                                .str("match")
                                .map(2)
                                .str("name")
                                .str("*")
                                .str("argument")
                                .array(1)
                                .map(3)
                                .str("path")
                                .str("/a")
                                .str("exists")
                                .boolean(true)
                                .str("path")
                                .str("/b");
  check_error(jq::api::decode_constraint(twice, MediaType::msgpack), "match.argument[0].path",
              "match.argument[0].path appears more than once");
  std::string many = "[";
  for (int i = 0; i < 33; ++i) many += std::string(i ? "," : "") + R"({"path":"","exists":true})";
  check_error(create_json(with_conditions(many + "]")), "match.argument", "got 33");
  std::string in = "[";
  for (int i = 0; i < 257; ++i) in += std::string(i ? "," : "") + std::to_string(i);
  check_error(create_json(with_conditions(R"([{"path":"/a","in":)" + in + "]}]")),
              "match.argument[0].in", "got 257 values");
}

TEST_CASE("a body that is not a map or not JSON is a bad request", "[unit]") {
  check_error(create_json("[1]"), "", "a constraint must be a map", ErrorCode::bad_request);
  REQUIRE_FALSE(create_json("{"));
  CHECK(create_json("{").error().code == ErrorCode::bad_request);
  CHECK_FALSE(create_json("{").error().field);
  // JSON that MessagePack cannot hold names the whole path to it, as other bad values do.
  const std::string big = "99999999999999999999999";
  check_error(create_json(R"({"name":"c1","match":{"name":"*"},"rate":{"limit":)" + big +
                          R"(,"period":1}})"),
              "rate.limit", "at /rate/limit: " + big, ErrorCode::bad_request);
  check_error(create_json(with_conditions(R"([{"path":"/a","exists":true},{"path":"/b","in":[1,)" +
                                          big + "]}]")),
              "match.argument[1].in[1]", "integer outside the 64-bit range",
              ErrorCode::bad_request);
}

TEST_CASE("limits of the numeric fields are inclusive and periods round up to the ms", "[unit]") {
  const auto c = create_json(with("concurrency", "100000"));
  REQUIRE(c);
  CHECK(c->concurrency == 100000);
  CHECK(create_json(with("concurrency", "1"))->concurrency == 1);
  const auto r =
      create_json(with("rate", R"({"limit":1000000,"period":31536000,"burst":1000000})"));
  REQUIRE(r);
  CHECK(r->rate->limit == 1000000);
  CHECK(r->rate->period == 31'536'000'000ms);
  CHECK(r->rate->burst == 1000000);
  CHECK(create_json(with("rate", R"({"limit":1,"period":0.0001})"))->rate->period == 1ms);
  CHECK(create_json(with("rate", R"({"limit":1,"period":1.5})"))->rate->period == 1500ms);
  CHECK(create_json(with("rate", R"({"limit":1,"period":1})"))->rate->burst == 0);
}

TEST_CASE("constraint names are 1-128 bytes of the name characters, any of them first", "[unit]") {
  using jq::api::is_valid_constraint_name;
  CHECK(is_valid_constraint_name("a"));
  CHECK(is_valid_constraint_name("-a"));
  CHECK(is_valid_constraint_name(".:_-"));
  CHECK(is_valid_constraint_name("AZaz09_.:-"));
  CHECK(is_valid_constraint_name(std::string(128, 'x')));
  CHECK_FALSE(is_valid_constraint_name(std::string(129, 'x')));
  CHECK_FALSE(is_valid_constraint_name(""));
  CHECK_FALSE(is_valid_constraint_name("a*"));
  CHECK_FALSE(is_valid_constraint_name("a#b"));
  // What blocked_by shows for a job waiting in its ordering line: a held job of a constraint so
  // named was taken for one (a merge or cancel left it in the constraint's held set). A new
  // definition may not take it; one stored by an earlier release still reads back.
  const auto reserved = jq::api::decode_constraint(
      R"({"name":"ordering_key","match":{"name":"*"}})", MediaType::json);
  REQUIRE_FALSE(reserved);
  CHECK(reserved.error().field == "name");
  CHECK_THAT(reserved.error().message, Catch::Contains("blocked_by"));
  const auto by_url = jq::api::decode_constraint_replace(R"({"match":{"name":"*"}})",
                                                         MediaType::json, "ordering_key");
  REQUIRE_FALSE(by_url);
  CHECK(by_url.error().field == "name");
  CHECK_FALSE(
      jq::api::decode_constraint_patch(R"({"concurrency":2})", MediaType::json, "ordering_key"));
  const std::vector<std::uint8_t> bytes =
      json::to_msgpack(json{{"name", "ordering_key"}, {"match", {{"name", "*"}}}});
  const auto stored = jq::api::decode_stored_constraint(std::string(bytes.begin(), bytes.end()));
  REQUIRE(stored);
  CHECK(stored->name == "ordering_key");
  // A PUT whose body leaves the name out takes the URL's, checked like any.
  CHECK_FALSE(
      jq::api::decode_constraint_replace(R"({"match":{"name":"*"}})", MediaType::json, "a*b"));
}

TEST_CASE("a PUT body may leave the name out but may not change it", "[unit]") {
  const auto same = jq::api::decode_constraint_replace(R"({"name":"c1","match":{"name":"*"}})",
                                                       MediaType::json, "c1");
  REQUIRE(same);
  CHECK(same->name == "c1");
  const auto unnamed =
      jq::api::decode_constraint_replace(R"({"match":{"name":"*"}})", MediaType::json, "c1");
  REQUIRE(unnamed);
  CHECK(unnamed->name == "c1");
  check_error(jq::api::decode_constraint_replace(R"({"name":"c2","match":{"name":"*"}})",
                                                 MediaType::json, "c1"),
              "name", "name must be the constraint's name in the URL (\"c1\"), got \"c2\"");
  check_error(jq::api::decode_constraint_replace(R"({"name":"c1"})", MediaType::json, "c1"),
              "match", "match is required");
}

TEST_CASE("a PATCH changes only the fields given and null removes an optional one", "[unit]") {
  Constraint base = *create_json(R"({"name":"c1","match":{"name":"a*"},"key":"/t","concurrency":3,)"
                                 R"("rate":{"limit":5,"period":1,"burst":2},"paused":true})");
  const auto decode = [](const std::string& body) {
    auto p = jq::api::decode_constraint_patch(body, MediaType::json, "c1");
    REQUIRE(p);
    return *p;
  };
  CHECK(jq::api::apply_patch(base, decode("{}")) == base);

  Constraint changed = jq::api::apply_patch(base, decode(R"({"concurrency":7,"paused":false})"));
  CHECK(changed.concurrency == 7);
  CHECK_FALSE(changed.paused);
  CHECK(changed.match == base.match);
  CHECK(changed.key == base.key);
  CHECK(changed.rate == base.rate);

  Constraint removed =
      jq::api::apply_patch(base, decode(R"({"key":null,"concurrency":null,"rate":null})"));
  CHECK_FALSE(removed.key);
  CHECK_FALSE(removed.concurrency);
  CHECK_FALSE(removed.rate);
  CHECK(removed.paused);

  // match and rate are replaced whole: burst goes back to its default.
  Constraint replaced = jq::api::apply_patch(
      base, decode(R"({"match":{"name":"b"},"rate":{"limit":9,"period":2},"name":"c1"})"));
  CHECK(replaced.match.name_glob == "b");
  CHECK(replaced.rate == jq::api::RateLimit{9, 2000ms, 0});
}

TEST_CASE("a PATCH refuses what a POST refuses, plus null for match or paused", "[unit]") {
  const auto patch = [](const std::string& body) {
    return jq::api::decode_constraint_patch(body, MediaType::json, "c1");
  };
  const auto error_of = [](const jq::Expected<ConstraintPatch, ApiError>& p) {
    REQUIRE_FALSE(p);
    return p.error();
  };
  CHECK(error_of(patch(R"({"match":null})")).field == "match");
  CHECK(error_of(patch(R"({"paused":null})")).field == "paused");
  CHECK(error_of(patch(R"({"rate":{"limit":1,"period":0}})")).field == "rate.period");
  CHECK(error_of(patch(R"({"name":"c2"})")).field == "name");
  CHECK(error_of(patch(R"({"nme":"c1"})")).field == "nme");
  CHECK(
      error_of(patch(R"({"match":{"name":"*","argument":[{"path":"x","exists":true}]}})")).field ==
      "match.argument[0].path");
  CHECK(error_of(patch("5")).code == ErrorCode::bad_request);
}

TEST_CASE("the encoded object has every field, absent ones as null", "[unit]") {
  const auto minimal = create_json(R"({"name":"c","match":{"name":"*"}})");
  REQUIRE(minimal);
  const json view =
      json::parse(jq::api::encode_body(jq::api::constraint_view(*minimal), MediaType::json));
  CHECK(view == json::parse(R"({"name":"c","match":{"name":"*","argument":[]},"key":null,)"
                            R"("concurrency":null,"rate":null,"paused":false})"));

  const auto full = create_json(
      R"({"name":"c","match":{"name":"m?","argument":[{"path":"/a/0","equals":{"x":[1,2.5]}},)"
      R"({"path":"","in":[null,true]},{"path":"/~1b","exists":false}]},"key":"/t",)"
      R"("concurrency":2,"rate":{"limit":3,"period":1.5},"paused":true})");
  REQUIRE(full);
  const json full_view =
      json::parse(jq::api::encode_body(jq::api::constraint_view(*full), MediaType::json));
  CHECK(full_view ==
        json::parse(R"({"name":"c","match":{"name":"m?","argument":[)"
                    R"({"path":"/a/0","equals":{"x":[1,2.5]}},{"path":"","in":[null,true]},)"
                    R"({"path":"/~1b","exists":false}]},"key":"/t","concurrency":2,)"
                    R"("rate":{"limit":3,"period":1.5,"burst":0},"paused":true})"));
}

TEST_CASE("a stored definition decodes back to the same constraint", "[unit]") {
  const auto c = create_json(
      R"({"name":"c","match":{"name":"m*","argument":[{"path":"/a","in":["x",1,{"k":[]}]}]},)"
      R"("key":"/t","concurrency":2,"rate":{"limit":3,"period":0.25,"burst":4}})");
  REQUIRE(c);
  const std::string stored = jq::api::encode_constraint(*c);
  const auto back = jq::api::decode_constraint(stored, MediaType::msgpack);
  REQUIRE(back);
  CHECK(*back == *c);
  CHECK(jq::api::encode_constraint(*back) == stored);
}

TEST_CASE("JSON Pointers unescape ~1 and ~0 and refuse anything else", "[unit]") {
  using jq::api::parse_json_pointer;
  CHECK(parse_json_pointer("")->tokens.empty());
  CHECK(parse_json_pointer("/")->tokens == std::vector<std::string>{""});
  CHECK(parse_json_pointer("/a/b")->tokens == std::vector<std::string>{"a", "b"});
  CHECK(parse_json_pointer("/a~1b/m~0n")->tokens == std::vector<std::string>{"a/b", "m~n"});
  CHECK(parse_json_pointer("/~01")->tokens == std::vector<std::string>{"~1"});
  CHECK(parse_json_pointer("//x/")->tokens == std::vector<std::string>{"", "x", ""});
  CHECK_FALSE(parse_json_pointer("a"));
  CHECK_FALSE(parse_json_pointer("/a~"));
  CHECK_FALSE(parse_json_pointer("/a~2"));
  CHECK(parse_json_pointer("/" + std::string(255, 'x')));
  CHECK_FALSE(parse_json_pointer("/" + std::string(256, 'x')));
  std::string deep;
  for (int i = 0; i < 64; ++i) deep += "/a";
  CHECK(parse_json_pointer(deep));
  CHECK_FALSE(parse_json_pointer(deep + "/a"));
}

TEST_CASE("array indexes are decimal without leading zeros", "[unit]") {
  using jq::api::pointer_array_index;
  CHECK(pointer_array_index("0") == 0u);
  CHECK(pointer_array_index("12") == 12u);
  CHECK(pointer_array_index("4294967295") == 4294967295u);
  CHECK_FALSE(pointer_array_index("4294967296"));
  CHECK_FALSE(pointer_array_index("01"));
  CHECK_FALSE(pointer_array_index("-"));
  CHECK_FALSE(pointer_array_index(""));
  CHECK_FALSE(pointer_array_index("1a"));
  CHECK_FALSE(pointer_array_index("-1"));
}
