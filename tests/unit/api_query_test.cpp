// Query strings: the first value of a name, percent-decoded.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "api/query.hpp"

using jq::api::percent_decode;
using jq::api::query_number;
using jq::api::query_value;

namespace {

// The value of a well-encoded query (nullopt: absent).
std::optional<std::string> value_of(std::string_view query, std::string_view name) {
  auto value = query_value(query, name);
  REQUIRE(value);
  return *value;
}

}  // namespace

TEST_CASE("query_value finds a name among several and decodes its value", "[unit]") {
  CHECK(value_of("a=1&b=x%20y&c=3", "b") == "x y");
  CHECK(value_of("a=1&b=2", "a") == "1");
  CHECK(value_of("a=1&b=2", "b") == "2");
  CHECK(value_of("q=a+b", "q") == "a b");
  CHECK(value_of("q=%2B%26%3d", "q") == "+&=");
}

TEST_CASE("query_value takes the first of repeated names", "[unit]") {
  CHECK(value_of("wait=1&wait=2", "wait") == "1");
}

TEST_CASE("query_value matches whole names only", "[unit]") {
  CHECK_FALSE(value_of("timeout=5", "time"));
  CHECK_FALSE(value_of("t=5", "timeout"));
  CHECK(value_of("xa=1&a=2", "a") == "2");
}

TEST_CASE("query_value of an absent name is nullopt", "[unit]") {
  CHECK_FALSE(value_of("", "a"));
  CHECK_FALSE(value_of("b=1", "a"));
  CHECK_FALSE(value_of("&&", "a"));
}

TEST_CASE("query_value of a name without a value is empty", "[unit]") {
  CHECK(value_of("flag&a=1", "flag") == "");
  CHECK(value_of("a=&b=1", "a") == "");
  CHECK(value_of("&&a=1&", "a") == "1");
}

// Taken as absent, `state=dead%` would list another state and `cursor=%ZZ` the first page.
TEST_CASE("query_value of a badly encoded value is a 400 naming the parameter", "[unit]") {
  for (const char* query : {"a=%zz", "a=%2", "a=x%", "b=1&a=%G0"}) {
    INFO(query);
    const auto value = query_value(query, "a");
    REQUIRE_FALSE(value);
    CHECK(value.error().field == "a");
    CHECK(value.error().message.find("percent escape") != std::string::npos);
  }
  CHECK(value_of("a=%zz&b=1", "b") == "1");
}

TEST_CASE("percent_decode decodes escapes of either case, including NUL", "[unit]") {
  CHECK(percent_decode("%41%62%2f%2F", false) == "Ab//");
  CHECK(percent_decode("a%00b", false) == std::string("a\0b", 3));
  CHECK(percent_decode("%e2%82%ac", false) == "\xe2\x82\xac");
  CHECK(percent_decode("", false) == "");
}

TEST_CASE("percent_decode turns '+' into a space only when asked", "[unit]") {
  CHECK(percent_decode("a+b", true) == "a b");
  CHECK(percent_decode("a+b", false) == "a+b");
  CHECK(percent_decode("a%2Bb", true) == "a+b");
}

TEST_CASE("percent_decode refuses a bad or truncated escape", "[unit]") {
  CHECK_FALSE(percent_decode("%", false));
  CHECK_FALSE(percent_decode("%4", false));
  CHECK_FALSE(percent_decode("ab%4", false));
  CHECK_FALSE(percent_decode("%G1", false));
  CHECK_FALSE(percent_decode("%1G", false));
  CHECK_FALSE(percent_decode("%-1", false));
}

namespace {

const jq::api::NumberParam kWait{
    .name = "wait", .min = 0, .max = 60, .fallback = 0, .integer = false, .unit = "seconds"};
const jq::api::NumberParam kLimit{
    .name = "limit", .min = 1, .max = 1000, .fallback = 100, .integer = true, .unit = ""};

}  // namespace

TEST_CASE("a numeric query parameter reads plain decimals in range", "[unit]") {
  CHECK(*query_number("", kWait) == 0);
  CHECK(*query_number("other=nan", kWait) == 0);
  CHECK(*query_number("wait=0", kWait) == 0);
  CHECK(*query_number("wait=0.25", kWait) == 0.25);
  CHECK(*query_number("wait=60", kWait) == 60);
  CHECK(*query_number("wait=6e1", kWait) == 60);
  CHECK(*query_number("a=1&wait=%32", kWait) == 2);
  CHECK(*query_number("", kLimit) == 100);
  CHECK(*query_number("limit=1000", kLimit) == 1000);
}

TEST_CASE("a numeric query parameter that is not a finite number in range is 400 naming it",
          "[unit]") {
  for (const std::string value :
       {"nan", "NaN", "-nan", "nan(1)", "inf",       "-inf", "Infinity", "1e309", "-1", "60.001",
        "abc", "",    "0x10", "1%",     "%6e%61%6e", " 1",   "1 ",       "+1",    "1e", "--1"}) {
    INFO("wait=" << value);
    auto parsed = query_number("wait=" + value, kWait);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().code == jq::api::ErrorCode::bad_request);
    CHECK(parsed.error().field == "wait");
  }
  auto nan = query_number("wait=nan", kWait);
  REQUIRE_FALSE(nan);
  CHECK(nan.error().message == "wait must be a number between 0 and 60 (seconds), got \"nan\"");
}

TEST_CASE("an integer query parameter refuses fractions and its range's outside", "[unit]") {
  for (const std::string value : {"0", "1001", "1.5", "x", "-1", "", "nan"}) {
    INFO("limit=" << value);
    auto parsed = query_number("limit=" + value, kLimit);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().field == "limit");
    CHECK(parsed.error().message.starts_with("limit must be an integer between 1 and 1000"));
  }
}
