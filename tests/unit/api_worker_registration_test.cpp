#include <catch2/catch.hpp>

#include <string>

#include "api/worker_registration.hpp"
#include "api_test_msgpack.hpp"

using jq::api::ApiError;
using jq::api::decode_worker_registration;
using jq::api::ErrorCode;
using jq::api::MediaType;
using jq::api::WorkerRegistration;
using jq::api::test::Mp;
using namespace std::chrono_literals;

namespace {

using Result = jq::Expected<WorkerRegistration, ApiError>;

Result register_json(const std::string& text) {
  return decode_worker_registration(text, MediaType::json);
}

Result register_mp(const std::string& bytes) {
  return decode_worker_registration(bytes, MediaType::msgpack);
}

// A valid registration with one JSON field added (or replaced, for names).
Result register_with(std::string_view field, std::string_view value) {
  const std::string names = field == "names" ? "" : R"("names":["a"],)";
  return register_json(R"({"url":"http://w:1/",)" + names + "\"" + std::string(field) +
                       "\":" + std::string(value) + "}");
}

void check_error(const Result& result, std::string_view field, std::string_view message_part) {
  REQUIRE_FALSE(result);
  CHECK(result.error().code == ErrorCode::invalid_job);
  CHECK(result.error().field == std::string(field));
  CHECK_THAT(result.error().message, Catch::Contains(std::string(message_part)));
}

}  // namespace

TEST_CASE("a minimal registration takes the defaults", "[unit]") {
  // clang-format off
  const std::string mp = Mp()
      .map(2)
          .str("url").str("http://worker:8081/run")
          .str("names").array(1).str("email.send");
  // clang-format on
  for (const auto& result :
       {register_json(R"({"url":"http://worker:8081/run","names":["email.send"]})"),
        register_mp(mp)}) {
    REQUIRE(result);
    CHECK(result->url == "http://worker:8081/run");
    CHECK(result->names == std::vector<std::string>{"email.send"});
    CHECK(result->concurrency == 8);
    CHECK(result->headers.empty());
    CHECK_FALSE(result->ttl);
    CHECK(result->secret.empty());
  }
}

TEST_CASE("a full registration keeps every value", "[unit]") {
  const auto result =
      register_json(R"({"url":"http://w/","names":["a","b:c"],"concurrency":10000,)"
                    R"("headers":{"Authorization":"Bearer x","X-Team":"ops"},"ttl":1.5})");
  REQUIRE(result);
  CHECK(result->names == std::vector<std::string>{"a", "b:c"});
  CHECK(result->concurrency == 10000);
  CHECK(result->headers == std::vector<std::pair<std::string, std::string>>{
                               {"Authorization", "Bearer x"}, {"X-Team", "ops"}});
  CHECK(result->ttl == 1500ms);
}

TEST_CASE("url and names are required", "[unit]") {
  check_error(register_json(R"({"names":["a"]})"), "url", "url is required");
  check_error(register_json(R"({"url":"http://w/"})"), "names", "names is required");
}

TEST_CASE("a url must be an absolute http or https URL of at most 2048 bytes", "[unit]") {
  CHECK(register_json(R"({"url":"https://w/","names":["a"]})"));
  check_error(register_json(R"({"url":"w:80/run","names":["a"]})"), "url",
              "url must be an absolute URL starting with http:// or https://, got \"w:80/run\"");
  check_error(register_json(R"({"url":"http://w:99999/","names":["a"]})"), "url", "invalid port");
  check_error(register_json(R"({"url":"http:///x","names":["a"]})"), "url", "must name a host");
  check_error(register_json(R"({"url":5,"names":["a"]})"), "url", "url must be a string, got 5");
  const std::string long_url = "http://w/" + std::string(2040, 'p');
  check_error(register_json(R"({"url":")" + long_url + R"(","names":["a"]})"), "url",
              "url must be at most 2048 bytes (this one has 2049), got \"http://w/ppp");
  CHECK(register_json(R"({"url":")" + long_url.substr(0, 2048) + R"(","names":["a"]})"));
}

TEST_CASE("names must be 1 to 1000 valid job names", "[unit]") {
  check_error(register_with("names", "[]"), "names", "names must be an array of 1 to 1000");
  check_error(register_with("names", "\"a\""), "names", "got \"a\"");
  check_error(register_with("names", R"(["a",".b"])"), "names", "names[1] must be a job name");
  check_error(register_with("names", R"(["a",7])"), "names", "got 7");
  std::string many = "[";
  for (int i = 0; i < 1001; ++i) many += (i ? ",\"n" : "\"n") + std::to_string(i) + "\"";
  check_error(register_with("names", many + "]"), "names", "got 1001 names");
  many = "[";
  for (int i = 0; i < 1000; ++i) many += (i ? ",\"n" : "\"n") + std::to_string(i) + "\"";
  const auto ok = register_json(R"({"url":"http://w/","names":)" + many + "]}");
  REQUIRE(ok);
  CHECK(ok->names.size() == 1000);
}

TEST_CASE("names may be [\"*\"] alone", "[unit]") {
  const auto all = register_json(R"({"url":"http://w/","names":["*"]})");
  REQUIRE(all);
  CHECK(all->names == std::vector<std::string>{"*"});
  check_error(register_json(R"({"url":"http://w/","names":["a","*"]})"), "names",
              "names may be [\"*\"] alone");
}

TEST_CASE("repeated names are kept once", "[unit]") {
  const auto result = register_json(R"({"url":"http://w/","names":["b","a","b"]})");
  REQUIRE(result);
  CHECK(result->names == std::vector<std::string>{"b", "a"});
}

TEST_CASE("concurrency must be an integer from 1 to 10000", "[unit]") {
  check_error(register_with("concurrency", "0"), "concurrency",
              "concurrency must be an integer between 1 and 10000, got 0");
  check_error(register_with("concurrency", "10001"), "concurrency", "got 10001");
  check_error(register_with("concurrency", "2.0"), "concurrency", "got 2.0");
  CHECK(register_with("concurrency", "1")->concurrency == 1);
}

TEST_CASE("headers must be a map of valid names to single-line strings", "[unit]") {
  check_error(register_with("headers", "[]"), "headers", "headers must be a map");
  check_error(register_with("headers", R"({"X-A":1})"), "headers", "string values, got \"X-A\": 1");
  check_error(register_with("headers", R"({"Bad Name":"v"})"), "headers",
              "\"Bad Name\" is not a valid HTTP header name");
  check_error(register_with("headers", R"({"":"v"})"), "headers", "not a valid HTTP header name");
  check_error(register_with("headers", R"({"X-A":"a\r\nX-Evil: 1"})"), "headers",
              "without CR, LF or NUL");
  check_error(register_with("headers", R"({"X-A":"a\u0000"})"), "headers", "NUL");
  check_error(register_with("headers", R"({"X-A":"1","x-a":"2"})"), "headers",
              "appears more than once");
  // clang-format off
  const std::string int_name = Mp()
      .map(3)
          .str("url").str("http://w/")
          .str("names").array(1).str("a")
          .str("headers").map(1).i(1).str("v");
  // clang-format on
  check_error(register_mp(int_name), "headers", "must map header names to string values");
}

TEST_CASE("a header value must be UTF-8 text, which a MessagePack body may break", "[unit]") {
  const auto with_value = [](const std::string& value) {
    return register_mp(Mp().map(3)
                           .str("url")
                           .str("http://w/")
                           .str("names")
                           .array(1)
                           .str("a")
                           .str("headers")
                           .map(1)
                           .str("X-A")
                           .str(value));
  };
  const auto hex = [](const std::string& bytes) {
    std::string out;
    for (unsigned char c : bytes) {
      out += "0123456789abcdef"[c >> 4];
      out += "0123456789abcdef"[c & 15];
    }
    return out;
  };
  for (const std::string& bad : {std::string("\xff"), std::string("a\x80"),  // no lead byte
                                 std::string("\xc3"),                        // cut short
                                 std::string("\xc0\xaf"),                    // overlong '/'
                                 std::string("\xe0\x80\xaf"),                // overlong
                                 std::string("\xed\xa0\x80"),                // a surrogate
                                 std::string("\xf4\x90\x80\x80"),            // past U+10FFFF
                                 std::string("\xf8\x88\x80\x80\x80")}) {     // 5 bytes
    INFO(hex(bad));
    check_error(with_value(bad), "headers", "the value of \"X-A\" must be valid UTF-8 text");
  }
  for (const std::string& good :
       {std::string("plain"), std::string("caf\xc3\xa9"), std::string("\xe2\x82\xac"),
        std::string("\xef\xbf\xbd"), std::string("\xf0\x9f\x98\x80"),
        std::string("\xf4\x8f\xbf\xbf")}) {
    INFO(hex(good));
    const auto result = with_value(good);
    REQUIRE(result);
    CHECK(result->headers.front().second == good);
  }
}

TEST_CASE("headers the master sets itself cannot be registered", "[unit]") {
  for (const char* name : {"X-Jq-Job-Id", "x-jq-attempt", "CONTENT-TYPE", "Content-Length", "host",
                           "X-Jq-Timestamp", "x-jq-signature"}) {
    INFO(name);
    check_error(register_with("headers", "{\"" + std::string(name) + "\":\"v\"}"), "headers",
                "is set by the master");
  }
}

// "Transfer-Encoding: chunked" beside the master's Content-Length made every dispatch to the
// worker fail (the body read as chunks).
TEST_CASE("headers about the message's framing or the connection cannot be registered", "[unit]") {
  for (const char* name : {"Transfer-Encoding", "content-encoding", "Connection", "Keep-Alive",
                           "te", "Trailer", "UPGRADE", "Expect"}) {
    INFO(name);
    check_error(register_with("headers", "{\"" + std::string(name) + "\":\"v\"}"), "headers",
                "says how the message is framed or the connection kept");
  }
  CHECK(register_with("headers", R"({"X-Te":"v","Authorization":"Bearer t"})"));
}

TEST_CASE("ttl is a number of seconds up to a year, kept in milliseconds", "[unit]") {
  CHECK(register_with("ttl", "30")->ttl == 30'000ms);
  CHECK(register_with("ttl", "0.0001")->ttl == 1ms);
  CHECK(register_with("ttl", "31536000")->ttl == 31'536'000'000ms);
  check_error(register_with("ttl", "0"), "ttl",
              "ttl must be a number of seconds greater than 0 and at most 31536000, got 0");
  check_error(register_with("ttl", "31536001"), "ttl", "got 31536001");
  check_error(register_with("ttl", "\"1m\""), "ttl", "got \"1m\"");
}

TEST_CASE("ca_file is a path kept for https urls only", "[unit]") {
  const auto https = register_json(R"({"url":"https://w/","names":["a"],"ca_file":"/ca.pem"})");
  REQUIRE(https);
  CHECK(https->ca_file == "/ca.pem");
  CHECK(register_json(R"({"url":"https://w/","names":["a"]})")->ca_file.empty());
  check_error(register_with("ca_file", R"("/ca.pem")"), "ca_file",
              "ca_file applies to https:// workers only; this url is http://");
  for (const char* bad : {R"("")", R"("a\nb")"}) {
    INFO(bad);
    check_error(
        register_json(R"({"url":"https://w/","names":["a"],"ca_file":)" + std::string(bad) + "}"),
        "ca_file", "ca_file must be the path of a PEM file on the master");
  }
  check_error(register_json(R"({"url":"https://w/","names":["a"],"ca_file":1})"), "ca_file",
              "ca_file must be a string");
}

TEST_CASE("a secret is kept as given, 16 to 256 bytes of any kind", "[unit]") {
  CHECK(register_with("secret", "\"0123456789abcdef\"")->secret == "0123456789abcdef");
  const std::string longest(256, 's');
  CHECK(register_with("secret", "\"" + longest + "\"")->secret == longest);
  // Bytes, not characters: 8 two-byte characters are 16 bytes.
  CHECK(register_with("secret", "\"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\"")
            ->secret.size() == 16);
}

TEST_CASE("a secret out of range or not a string is refused without being echoed", "[unit]") {
  const std::string too_short = "short-secret-15";
  const std::string too_long(257, 'L');
  check_error(register_with("secret", "\"" + too_short + "\""), "secret",
              "secret must be 16 to 256 bytes, got 15 bytes");
  check_error(register_with("secret", "\"" + too_long + "\""), "secret", "got 257 bytes");
  check_error(register_with("secret", "\"\""), "secret", "got 0 bytes");
  const auto number = register_with("secret", "12345678901234567");
  check_error(number, "secret", "secret must be a string of 16 to 256 bytes");
  CHECK(register_with("secret", "null").error().field == "secret");
  CHECK(register_with("secret", "[\"0123456789abcdef\"]").error().field == "secret");
  CHECK_THAT(register_with("secret", "\"" + too_short + "\"").error().message,
             !Catch::Contains(too_short));
  CHECK_THAT(number.error().message, !Catch::Contains("12345678901234567"));
}

TEST_CASE("unknown registration fields are rejected and named", "[unit]") {
  check_error(register_with("name", "[\"a\"]"), "name",
              "unknown field \"name\": allowed fields are url, names, concurrency, headers, ttl, "
              "ca_file, secret");
}

TEST_CASE("a registration body that is not a map is a bad request", "[unit]") {
  for (const auto& result : {register_json("[]"), register_json("{"), register_mp(Mp().i(1))}) {
    REQUIRE_FALSE(result);
    CHECK(result.error().code == ErrorCode::bad_request);
  }
}
