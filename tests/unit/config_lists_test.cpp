// auth tokens and static workers: the list sections, where errors name the item's index.
#include <catch2/catch.hpp>

#include "src/config/config.hpp"
#include "tests/unit/config_test_support.hpp"

using namespace jq::config;
using jq::config::test::yaml_error;

namespace {
constexpr const char* kToken = "0123456789abcdef";  // 16 characters, the shortest allowed
}

TEST_CASE("an absent auth section leaves auth off", "[unit]") {
  CHECK_FALSE(parse_yaml("listen: 127.0.0.1:1").auth.configured);
}

TEST_CASE("a bare auth line turns auth on with no tokens", "[unit]") {
  const Auth auth = parse_yaml("auth:\n").auth;
  CHECK(auth.configured);
  CHECK(auth.tokens.empty());
  CHECK_FALSE(auth.allow_open);
}

TEST_CASE("auth tokens are read with their roles", "[unit]") {
  const Auth auth = parse_yaml(R"(
auth:
  tokens:
    - {token: "pusher-token-0000001", role: push}
    - token: "worker-token-000001"
      role: worker
    - {token: "admin-token-0000001", role: admin}
)")
                        .auth;
  REQUIRE(auth.tokens.size() == 3);
  CHECK(auth.tokens[0] == Token{"pusher-token-0000001", Role::push});
  CHECK(auth.tokens[1] == Token{"worker-token-000001", Role::worker});
  CHECK(auth.tokens[2] == Token{"admin-token-0000001", Role::admin});
}

TEST_CASE("an unknown role names auth.tokens[0].role", "[unit]") {
  const auto error = yaml_error("auth: {tokens: [{token: '0123456789abcdef', role: root}]}");
  CHECK(error.key == "auth.tokens[0].role");
  CHECK(error.message ==
        "config: auth.tokens[0].role: must be one of push, worker or admin, got \"root\"");
}

TEST_CASE("a short token is refused without echoing it", "[unit]") {
  const auto error = yaml_error("auth: {tokens: [{token: 'hunter2', role: admin}]}");
  CHECK(error.key == "auth.tokens[0].token");
  CHECK(error.message.find("hunter2") == std::string::npos);
  CHECK(error.message.find("got 7 characters") != std::string::npos);
}

TEST_CASE("token entries are checked for shape, missing fields and unknown keys", "[unit]") {
  const std::string token = kToken;
  CHECK(yaml_error("auth: {tokens: [" + token + "]}").key == "auth.tokens[0]");
  CHECK(yaml_error("auth: {tokens: [{role: push}]}").key == "auth.tokens[0].token");
  CHECK(yaml_error("auth: {tokens: [{token: " + token + "}]}").key == "auth.tokens[0].role");
  CHECK(yaml_error("auth: {tokens: [{token: " + token + ", role: push, note: x}]}").key ==
        "auth.tokens[0].note");
  CHECK(yaml_error("auth: {tokens: {token: " + token + "}}").key == "auth.tokens");
  CHECK(yaml_error("auth: {tokens: [{token: 'has a space in it!!', role: push}]}").key ==
        "auth.tokens[0].token");
}

TEST_CASE("the same token listed twice is refused", "[unit]") {
  const std::string token = kToken;
  const auto error = yaml_error("auth: {tokens: [{token: " + token +
                                ", role: push}, {token: " + token + ", role: admin}]}");
  CHECK(error.key == "auth.tokens[1].token");
  CHECK(error.message.find(token) == std::string::npos);
}

TEST_CASE("static workers are read with their defaults", "[unit]") {
  const auto workers = parse_yaml(R"(
workers:
  - url: http://10.0.0.5:9000/run
    names: [send_email, resize_image]
  - url: http://10.0.0.6:9000/
    names: ["*"]
    concurrency: 100
    headers:
      Authorization: Bearer abc
      X-Team: media
)")
                           .workers;
  REQUIRE(workers.size() == 2);
  CHECK(workers[0].url == "http://10.0.0.5:9000/run");
  CHECK(workers[0].names == std::vector<std::string>{"send_email", "resize_image"});
  CHECK(workers[0].concurrency == 8);
  CHECK(workers[0].headers.empty());
  CHECK(workers[1].names == std::vector<std::string>{"*"});
  CHECK(workers[1].concurrency == 100);
  CHECK(workers[1].headers ==
        std::map<std::string, std::string>{{"Authorization", "Bearer abc"}, {"X-Team", "media"}});
}

TEST_CASE("a static worker's secret is read, and refused without being quoted", "[unit]") {
  const auto workers =
      parse_yaml("workers: [{url: 'http://a:1/', names: [x], secret: 'static-secret-0123'}]")
          .workers;
  REQUIRE(workers.size() == 1);
  CHECK(workers[0].secret == "static-secret-0123");
  CHECK(parse_yaml("workers: [{url: 'http://a:1/', names: [x]}]").workers[0].secret.empty());
  const auto short_one = yaml_error("workers: [{url: 'http://a:1/', names: [x], secret: 'short'}]");
  CHECK(short_one.key == "workers[0].secret");
  CHECK(short_one.message == "config: workers[0].secret: must be 16 to 256 bytes, got 5 bytes");
  const auto long_one = yaml_error("workers: [{url: 'http://a:1/', names: [x], secret: '" +
                                   std::string(257, 'L') + "'}]");
  CHECK(long_one.message == "config: workers[0].secret: must be 16 to 256 bytes, got 257 bytes");
  const auto list = yaml_error("workers: [{url: 'http://a:1/', names: [x], secret: [a, b]}]");
  CHECK(list.message ==
        "config: workers[0].secret: must be a string of 16 to 256 bytes, got a list");
}

TEST_CASE("a worker url that is not http:// or https:// names workers[1].url", "[unit]") {
  const auto error = yaml_error(R"(
workers:
  - {url: "http://a:1/", names: [x]}
  - {url: "ftp://b:1/", names: [x]}
)");
  CHECK(error.key == "workers[1].url");
  CHECK(error.message ==
        "config: workers[1].url: must be an absolute URL starting with http:// or https://, got "
        "\"ftp://b:1/\"");
}

// Static workers are held to the rules of POST /v1/workers (api/worker_registration.hpp).
TEST_CASE("a worker url is refused by the API's rules, naming workers[1].url", "[unit]") {
  struct Case {
    const char* url;
    const char* message;
  };
  const Case cases[] = {
      {"http://user:password@10.0.0.5:9000/run",
       "config: workers[1].url: must not contain user:password@; use headers for credentials, "
       "got \"http://user:password@10.0.0.5:9000/run\""},
      {"http://:9000/run",
       "config: workers[1].url: must name a host: http://HOST[:PORT]/path, got "
       "\"http://:9000/run\""},
      {"https://10.0.0.5:99999/run",
       "config: workers[1].url: has an invalid port \"99999\": use 1-65535, got "
       "\"https://10.0.0.5:99999/run\""},
      {"http://10.0.0.5:70000/",
       "config: workers[1].url: has an invalid port \"70000\": use "
       "1-65535, got \"http://10.0.0.5:70000/\""},
  };
  for (const Case& c : cases) {
    INFO(c.url);
    const auto error = yaml_error("workers:\n  - {url: 'http://a:1/', names: [x]}\n  - {url: '" +
                                  std::string(c.url) + "', names: [x]}\n");
    CHECK(error.key == "workers[1].url");
    CHECK(error.message == c.message);
  }
}

TEST_CASE("an https worker may name its ca_file, an http one may not", "[unit]") {
  const auto workers = parse_yaml(R"(
workers:
  - {url: "https://10.0.0.5/run", names: [x], ca_file: /etc/jq/workers-ca.pem}
  - {url: "https://10.0.0.6/run", names: [x]}
)")
                           .workers;
  REQUIRE(workers.size() == 2);
  CHECK(workers[0].ca_file == "/etc/jq/workers-ca.pem");
  CHECK(workers[1].ca_file.empty());
  const auto http = yaml_error(
      "workers:\n  - {url: 'http://a:1/', names: [x]}\n"
      "  - {url: 'http://b:1/', names: [x], ca_file: /ca.pem}\n");
  CHECK(http.key == "workers[1].ca_file");
  CHECK(http.message ==
        "config: workers[1].ca_file: applies to https:// workers only; this url is http://, got "
        "\"/ca.pem\"");
  CHECK(yaml_error("workers: [{url: 'https://b:1/', names: [x], ca_file: ''}]").key ==
        "workers[0].ca_file");
}

TEST_CASE("a worker url longer than the API allows is refused", "[unit]") {
  const std::string url = "http://w/" + std::string(2040, 'p');
  const auto error = yaml_error("workers: [{url: '" + url + "', names: [x]}]");
  CHECK(error.key == "workers[0].url");
  CHECK(error.message.find("must be at most 2048 bytes (this one has 2049)") != std::string::npos);
  CHECK(parse_yaml("workers: [{url: '" + url.substr(0, 2048) + "', names: [x]}]").workers.size() ==
        1);
}

TEST_CASE("a header the master sets itself is refused, naming workers[1].headers.Host", "[unit]") {
  for (const char* name :
       {"Host", "Content-Length", "content-type", "X-Jq-Job-Id", "x-jq-attempt"}) {
    INFO(name);
    const auto error = yaml_error(
        "workers:\n  - {url: 'http://a:1/', names: [x]}\n"
        "  - {url: 'http://b:1/', names: [x], headers: {" +
        std::string(name) + ": v}}\n");
    CHECK(error.key == "workers[1].headers." + std::string(name));
    CHECK(error.message == "config: workers[1].headers." + std::string(name) +
                               ": is set by the master and cannot be registered");
  }
}

TEST_CASE("a header value with CR or LF is refused, naming its key", "[unit]") {
  for (const char* value : {R"("a\r\nX-Evil: 1")", R"("a\nb")", R"("a\rb")"}) {
    INFO(value);
    const auto error = yaml_error(
        "workers: [{url: 'http://a:1/', names: [x], headers: {X-A: " + std::string(value) + "}}]");
    CHECK(error.key == "workers[0].headers.X-A");
    CHECK(error.message.find("workers[0].headers.X-A: must be at most 8192 bytes without CR, LF "
                             "or NUL, got ") != std::string::npos);
  }
}

TEST_CASE("a header name repeated in another case is refused", "[unit]") {
  const auto error =
      yaml_error("workers: [{url: 'http://a:1/', names: [x], headers: {X-A: '1', x-a: '2'}}]");
  CHECK(error.key == "workers[0].headers.x-a");
  CHECK(error.message.find("repeats a header name") != std::string::npos);
}

TEST_CASE("worker names follow the API's job name rule, and repeats are kept once", "[unit]") {
  const auto error = yaml_error("workers: [{url: 'http://a:1/', names: [ok, 'bad name']}]");
  CHECK(error.key == "workers[0].names[1]");
  CHECK(error.message.find("must be a job name (1-128 bytes") != std::string::npos);
  CHECK(yaml_error("workers: [{url: 'http://a:1/', names: [.hidden]}]").key ==
        "workers[0].names[0]");
  const auto workers = parse_yaml("workers: [{url: 'http://a:1/', names: [b, a, b]}]").workers;
  REQUIRE(workers.size() == 1);
  CHECK(workers[0].names == std::vector<std::string>{"b", "a"});
}

TEST_CASE("worker entries are checked field by field", "[unit]") {
  struct Case {
    const char* yaml;
    const char* key;
  };
  const Case cases[] = {
      {"workers: [http://a:1/]", "workers[0]"},
      {"workers: [{names: [x]}]", "workers[0].url"},
      {"workers: [{url: 'http://'}]", "workers[0].url"},
      {"workers: [{url: 'http://a:1/'}]", "workers[0].names"},
      {"workers: [{url: 'http://a:1/', names: []}]", "workers[0].names"},
      {"workers: [{url: 'http://a:1/', names: x}]", "workers[0].names"},
      {"workers: [{url: 'http://a:1/', names: [x, '']}]", "workers[0].names[1]"},
      {"workers: [{url: 'http://a:1/', names: [x, '*']}]", "workers[0].names[1]"},
      {"workers: [{url: 'http://a:1/', names: [x], concurrency: 0}]", "workers[0].concurrency"},
      {"workers: [{url: 'http://a:1/', names: [x], concurrency: 10001}]", "workers[0].concurrency"},
      {"workers: [{url: 'http://a:1/', names: [x], headers: [a]}]", "workers[0].headers"},
      {"workers: [{url: 'http://a:1/', names: [x], headers: {'Bad Name': v}}]",
       "workers[0].headers.Bad Name"},
      {"workers: [{url: 'http://a:1/', names: [x], headers: {X-A: [v]}}]",
       "workers[0].headers.X-A"},
      {"workers: [{url: 'http://a:1/', names: [x], headers: {X-A: \"a\\nb\"}}]",
       "workers[0].headers.X-A"},
  };
  for (const Case& c : cases) {
    INFO(c.yaml);
    CHECK(yaml_error(c.yaml).key == c.key);
  }
}

TEST_CASE("an unknown key inside a worker names workers[0].name", "[unit]") {
  const auto error = yaml_error("workers: [{url: 'http://a:1/', name: [x]}]");
  CHECK(error.key == "workers[0].name");
  CHECK(error.message.find("did you mean names?") != std::string::npos);
}

TEST_CASE("the same worker url listed twice is refused", "[unit]") {
  const auto error = yaml_error(R"(
workers:
  - {url: "http://a:1/", names: [x]}
  - {url: "http://a:1/", names: [y]}
)");
  CHECK(error.key == "workers[1].url");
  CHECK(error.message.find("repeats workers[0].url") != std::string::npos);
}
