#include <catch2/catch.hpp>

#include "api/http_url.hpp"

using jq::api::parse_http_url;

TEST_CASE("an http URL splits into host, port and target", "[unit]") {
  auto url = parse_http_url("http://worker.example:8081/run?x=1");
  REQUIRE(url);
  CHECK(url->host == "worker.example");
  CHECK(url->port == 8081);
  CHECK(url->target == "/run?x=1");
}

TEST_CASE("the port defaults to 80 and the target to /", "[unit]") {
  auto url = parse_http_url("HTTP://10.0.0.5");
  REQUIRE(url);
  CHECK(url->host == "10.0.0.5");
  CHECK(url->port == 80);
  CHECK(url->target == "/");
  CHECK(parse_http_url("http://h?q=1")->target == "/?q=1");
}

TEST_CASE("IPv6 addresses are written in brackets", "[unit]") {
  auto url = parse_http_url("http://[::1]:9000/jobs");
  REQUIRE(url);
  CHECK(url->host == "::1");
  CHECK(url->port == 9000);
  CHECK(url->target == "/jobs");
  CHECK_FALSE(parse_http_url("http://[::1/jobs"));
  CHECK_FALSE(parse_http_url("http://[]/"));
  CHECK_FALSE(parse_http_url("http://[::1]x/"));
}

TEST_CASE("https is refused unless the caller allows it", "[unit]") {
  auto url = parse_http_url("https://worker.example/");
  REQUIRE_FALSE(url);
  CHECK_THAT(url.error(), Catch::Contains("only http:// is supported for now"));
}

TEST_CASE("an allowed https URL defaults to port 443", "[unit]") {
  using jq::api::UrlSchemes;
  auto url = parse_http_url("HTTPS://worker.example/run", UrlSchemes::http_or_https);
  REQUIRE(url);
  CHECK(url->https);
  CHECK(url->host == "worker.example");
  CHECK(url->port == 443);
  CHECK(url->target == "/run");
  CHECK(parse_http_url("https://[::1]:8443", UrlSchemes::http_or_https)->port == 8443);
  CHECK_FALSE(parse_http_url("http://h/", UrlSchemes::http_or_https)->https);
  CHECK_FALSE(parse_http_url("ftp://h/", UrlSchemes::http_or_https));
}

TEST_CASE("URLs that are not absolute http URLs are refused", "[unit]") {
  for (const char* bad : {"", "worker.example/run", "ftp://h/", "http://", "http:///path",
                          "http://:80/", "http://user:pw@h/", "http://h:0/", "http://h:65536/",
                          "http://h:/", "http://h:8x/", "http://h:123456/", "http://h/a b",
                          "http://h/#frag", "http://h/\r\n", "http://h h/", "http://h\x01/"}) {
    INFO(bad);
    CHECK_FALSE(parse_http_url(bad));
  }
  CHECK(parse_http_url("http://h:65535/")->port == 65535);
  CHECK(parse_http_url("http://h:1/")->port == 1);
}

TEST_CASE(
    "a path or query with a byte outside printable ASCII is refused, percent-encoded it is not",
    "[unit]") {
  // The fuzzer's registration: a URL that is not UTF-8 could not be stored as JSON (a 500).
  for (const char* bad : {"http://h/\x8c\xff", "http://h/caf\xc3\xa9", "http://h/?q=\x7f"}) {
    INFO(bad);
    const auto url = parse_http_url(bad);
    REQUIRE_FALSE(url);
    CHECK(url.error().find("non-ASCII") != std::string::npos);
  }
  CHECK(parse_http_url("http://h/caf%C3%A9?x=%FF")->target == "/caf%C3%A9?x=%FF");
}
