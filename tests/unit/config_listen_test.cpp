#include <catch2/catch.hpp>

#include "src/config/config.hpp"
#include "tests/unit/config_test_support.hpp"

using namespace jq::config;
using jq::config::test::raised_by;

TEST_CASE("listen reads host:port", "[unit]") {
  CHECK(parse_listen("127.0.0.1:8080") == ListenAddress{"127.0.0.1", 8080});
  CHECK(parse_listen("0.0.0.0:1") == ListenAddress{"0.0.0.0", 1});
  CHECK(parse_listen("jq.internal:65535") == ListenAddress{"jq.internal", 65535});
}

TEST_CASE("listen reads an IPv6 host in brackets", "[unit]") {
  CHECK(parse_listen("[::1]:8080") == ListenAddress{"::1", 8080});
  CHECK(parse_listen("[::]:9000") == ListenAddress{"::", 9000});
  CHECK(to_string(parse_listen("[fe80::1]:80")) == "[fe80::1]:80");
}

TEST_CASE("an IPv6 listen address in YAML must be quoted", "[unit]") {
  CHECK(parse_yaml("listen: \"[::1]:8080\"").listen == ListenAddress{"::1", 8080});
  CHECK(raised_by([] { parse_yaml("listen: [::1]"); }).message ==
        "config: listen: must be a string HOST:PORT (quote an IPv6 one: \"[::1]:8080\"), got a "
        "list");
}

TEST_CASE("a malformed listen address is refused with the form to use", "[unit]") {
  const char* bad[] = {"",         "8080",     "localhost", ":8080",  "[::1]8080",
                       "[::1",     "::1:8080", "host:",     "host:0", "host:65536",
                       "host:80x", "host:-1",  "ho st:80",  "[]:80",  "host:+80"};
  for (const char* text : bad) {
    INFO(text);
    CHECK(raised_by([&] { parse_listen(text); }).key == "listen");
  }
  CHECK(raised_by([] { parse_listen("::1:8080"); }).message ==
        "config: listen: an IPv6 address needs brackets, e.g. [::1]:8080, got \"::1:8080\"");
  CHECK(raised_by([] { parse_listen("host:0"); }).message ==
        "config: listen: the port must be a number between 1 and 65535, got \"host:0\"");
}

TEST_CASE("loopback addresses are 127.0.0.0/8, ::1 and localhost", "[unit]") {
  CHECK(ListenAddress{"127.0.0.1", 1}.is_loopback());
  CHECK(ListenAddress{"127.255.0.9", 1}.is_loopback());
  CHECK(ListenAddress{"::1", 1}.is_loopback());
  CHECK(ListenAddress{"localhost", 1}.is_loopback());
  CHECK(ListenAddress{"LocalHost", 1}.is_loopback());
  CHECK_FALSE(ListenAddress{"0.0.0.0", 1}.is_loopback());
  CHECK_FALSE(ListenAddress{"::", 1}.is_loopback());
  CHECK_FALSE(ListenAddress{"128.0.0.1", 1}.is_loopback());
  CHECK_FALSE(ListenAddress{"10.0.0.1", 1}.is_loopback());
  CHECK_FALSE(ListenAddress{"127.example.com", 1}.is_loopback());
}

TEST_CASE("log levels, formats and roles have one name each", "[unit]") {
  for (LogLevel level :
       {LogLevel::trace, LogLevel::debug, LogLevel::info, LogLevel::warn, LogLevel::error}) {
    CHECK(parse_log_level(std::string(to_string(level))) == level);
  }
  CHECK(to_string(LogFormat::json) == "json");
  CHECK(to_string(Role::worker) == "worker");
  CHECK(raised_by([] { parse_log_level("warning"); }).key == "log.level");
}
