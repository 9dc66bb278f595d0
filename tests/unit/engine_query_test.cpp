// Query strings: the first value of a name, percent-decoded.
#include <catch2/catch.hpp>

#include "src/http/query.hpp"

using jq::http::percent_decode;
using jq::http::query_value;

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
