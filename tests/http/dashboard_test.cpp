// The dashboard is served from the binary: the page and its assets are open with auth on (they
// hold no data), carry their Content-Type, no-cache and a strict Content-Security-Policy, and
// every asset the page links to is there.
#include <catch2/catch.hpp>

#include <regex>

#include "tests/support/daemon.hpp"
#include "tests/support/redis_server.hpp"

using jq::test::Daemon;
using jq::test::DaemonOptions;
using jq::test::HttpClient;
using jq::test::HttpResult;
using jq::test::RedisServer;

namespace {

const std::string kAuthYaml =
    "auth:\n  tokens:\n    - {token: dashboard-admin-token-5c2e, role: admin}\n";

HttpResult get_without_token(const HttpClient& http, const std::string& target) {
  return http.request("GET", target, "", {{"Accept", "text/html,*/*"}});
}

void check_served(const HttpResult& res, const std::string& content_type) {
  CHECK(res.status == 200);
  CHECK(res.header("content-type").starts_with(content_type));
  CHECK(res.header("cache-control") == "no-cache");
  CHECK(res.header("content-security-policy").find("default-src 'self'") != std::string::npos);
  CHECK(res.header("content-security-policy").find("unsafe-inline") == std::string::npos);
  CHECK_FALSE(res.body.empty());
}

struct Fixture {
  RedisServer redis;
  Daemon daemon{DaemonOptions{redis.url(), 4, kAuthYaml}};
  HttpClient http = daemon.http();
};

}  // namespace

TEST_CASE("with auth on, GET / serves the dashboard page without a token", "[http]") {
  Fixture f;
  const auto page = get_without_token(f.http, "/");
  check_served(page, "text/html");
  CHECK(page.body.find("<title>jqmaster dashboard</title>") != std::string::npos);
  // The page itself is open; the data behind it is not.
  CHECK(get_without_token(f.http, "/v1/stats").status == 401);
}

TEST_CASE("the dashboard's script and style sheet are served with their types", "[http]") {
  Fixture f;
  check_served(get_without_token(f.http, "/assets/app.js"), "text/javascript");
  check_served(get_without_token(f.http, "/assets/style.css"), "text/css");
}

TEST_CASE("every asset the dashboard page links to is served", "[http]") {
  Fixture f;
  const std::string page = get_without_token(f.http, "/").body;
  const std::regex link(R"re((?:src|href)="(/assets/[^"]+)")re");
  int links = 0;
  for (std::sregex_iterator it(page.begin(), page.end(), link), end; it != end; ++it) {
    const std::string target = (*it)[1];
    INFO(target);
    CHECK(get_without_token(f.http, target).status == 200);
    ++links;
  }
  CHECK(links >= 2);
}

TEST_CASE("an asset the dashboard does not have is 404", "[http]") {
  Fixture f;
  const auto res = f.http.request("GET", "/assets/nope.js", "", {{"Accept", "application/json"}});
  CHECK(res.status == 404);
  CHECK(res.value()["error"] == "not_found");
  CHECK(f.http.request("GET", "/assets/index.html").status == 404);
  CHECK(f.http.request("POST", "/", "").status == 405);
}
