// Query strings: the first value of a name, percent-decoded.
#include <catch2/catch.hpp>

#include "api/query.hpp"

using jq::api::percent_decode;
using jq::api::query_number;
using jq::api::query_value;

TEST_CASE("query_value finds a name among several and decodes its value", "[unit]") {
  CHECK(query_value("a=1&b=x%20y&c=3", "b") == "x y");
  CHECK(query_value("a=1&b=2", "a") == "1");
  CHECK(query_value("a=1&b=2", "b") == "2");
  CHECK(query_value("q=a+b", "q") == "a b");
  CHECK(query_value("q=%2B%26%3d", "q") == "+&=");
}

TEST_CASE("query_value takes the first of repeated names", "[unit]") {
  CHECK(query_value("wait=1&wait=2", "wait") == "1");
}

TEST_CASE("query_value matches whole names only", "[unit]") {
  CHECK_FALSE(query_value("timeout=5", "time"));
  CHECK_FALSE(query_value("t=5", "timeout"));
  CHECK(query_value("xa=1&a=2", "a") == "2");
}

TEST_CASE("query_value of an absent name is nullopt", "[unit]") {
  CHECK_FALSE(query_value("", "a"));
  CHECK_FALSE(query_value("b=1", "a"));
  CHECK_FALSE(query_value("&&", "a"));
}

TEST_CASE("query_value of a name without a value is empty", "[unit]") {
  CHECK(query_value("flag&a=1", "flag") == "");
  CHECK(query_value("a=&b=1", "a") == "");
  CHECK(query_value("&&a=1&", "a") == "1");
}

TEST_CASE("query_value of a badly encoded value is nullopt", "[unit]") {
  CHECK_FALSE(query_value("a=%zz", "a"));
  CHECK_FALSE(query_value("a=%2", "a"));
  CHECK_FALSE(query_value("a=x%", "a"));
  CHECK(query_value("a=%zz&b=1", "b") == "1");
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
