// Bearer-token auth against the real daemon: 401 without a good token, 403 for a role the
// route does not admit, the operations endpoints open, and tokens kept out of the log.
#include <catch2/catch.hpp>

#include <csignal>
#include <fstream>

#include "tests/support/daemon.hpp"
#include "tests/support/redis_server.hpp"

using namespace std::chrono_literals;
using jq::test::Daemon;
using jq::test::DaemonOptions;
using jq::test::Headers;
using jq::test::HttpClient;
using jq::test::HttpResult;
using jq::test::RedisServer;
using nlohmann::json;

namespace {

const std::string kPushToken = "push-token-4f1c9a0e7b2d";
const std::string kWorkerToken = "worker-token-8e3b6d1f0a5c";
const std::string kAdminToken = "admin-token-2a7c5e9b4d1f";

const std::string kAuthYaml =
    "auth:\n  tokens:\n"
    "    - {token: " +
    kPushToken +
    ", role: push}\n"
    "    - {token: " +
    kWorkerToken +
    ", role: worker}\n"
    "    - {token: " +
    kAdminToken + ", role: admin}\n";

// Whether a master started as a plain child process answers /readyz within 20 s.
bool serves(jq::test::ChildProcess& master, const HttpClient& http) {
  return jq::test::wait_until(
      [&] {
        try {
          return master.running() && http.get("/readyz").status == 200;
        } catch (const std::exception&) {
          return false;
        }
      },
      20s);
}

// A JSON request (JSON answer) with `token` as a bearer token; no Authorization when empty.
HttpResult call(const HttpClient& http, const std::string& method, const std::string& target,
                const std::string& token, const json& body = nullptr) {
  Headers headers = {{"Accept", "application/json"}};
  if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
  if (!body.is_null()) headers.emplace_back("Content-Type", "application/json");
  return http.request(method, target, body.is_null() ? "" : body.dump(), headers);
}

// Jobs nobody serves (so they stay queued) and workers serving another name (so nothing is
// dispatched to their unreachable URLs).
json a_job() {
  return {{"name", "nobody.serves.this"}, {"keep_result", true}};
}

json a_worker(int n) {
  return {{"url", "http://127.0.0.1:9/w" + std::to_string(n)}, {"names", {"no.such.jobs"}}};
}

json a_constraint() {
  return {{"name", "c1"}, {"match", {{"name", "*"}}}, {"concurrency", 1}};
}

void check_error(const HttpResult& res, int status, const std::string& code) {
  CHECK(res.status == status);
  const json body = res.value();
  CHECK(body["error"] == code);
  CHECK_FALSE(body["message"].get<std::string>().empty());
}

struct Fixture {
  RedisServer redis;
  Daemon daemon{DaemonOptions{redis.url(), 4, kAuthYaml + "log:\n  level: debug\n"}};
  HttpClient http = daemon.http();

  std::string push_as(const std::string& token) {
    auto res = call(http, "POST", "/v1/jobs", token, a_job());
    REQUIRE(res.status == 201);
    return res.value()["id"];
  }
};

}  // namespace

TEST_CASE("with auth on, a /v1 request without a token gets 401 in the encoding asked for",
          "[http]") {
  Fixture f;
  auto as_json = call(f.http, "GET", "/v1/jobs/x", "");
  check_error(as_json, 401, "unauthorized");
  CHECK(as_json.header("content-type") == "application/json");
  CHECK(as_json.header("www-authenticate") == "Bearer");
  CHECK(as_json.value()["message"].get<std::string>().find("Authorization: Bearer") !=
        std::string::npos);

  const std::string job = std::string("\x81\xa4name\xa1n", 8);  // {"name": "n"}
  auto as_msgpack = f.http.post_msgpack("/v1/jobs", job);
  check_error(as_msgpack, 401, "unauthorized");
  CHECK(as_msgpack.header("content-type") == "application/msgpack");
  CHECK(as_msgpack.header("www-authenticate") == "Bearer");

  // An unknown path under /v1 needs a token too; with one it is simply not there.
  check_error(call(f.http, "GET", "/v1/nothing/here", ""), 401, "unauthorized");
  check_error(call(f.http, "GET", "/v1/nothing/here", kPushToken), 404, "not_found");
}

TEST_CASE("an unknown or malformed token gets 401", "[http]") {
  Fixture f;
  const std::vector<std::string> unknown = {"not-a-configured-token-at-all",
                                            kPushToken.substr(0, kPushToken.size() - 1),
                                            kPushToken + "x", kAdminToken + kAdminToken};
  for (const std::string& token : unknown) {
    auto res = call(f.http, "POST", "/v1/jobs", token, a_job());
    check_error(res, 401, "unauthorized");
    CHECK(res.header("www-authenticate") == "Bearer");
  }
  const std::vector<std::string> malformed = {"Basic " + kAdminToken, "Bearer", "Bearer ",
                                              kAdminToken, "Bearer " + kAdminToken + " extra"};
  for (const std::string& header : malformed) {
    auto res = f.http.request("GET", "/v1/stats", "",
                              {{"Accept", "application/json"}, {"Authorization", header}});
    check_error(res, 401, "unauthorized");
  }
  // The scheme is case-insensitive (RFC 7235).
  auto lower =
      f.http.request("GET", "/v1/stats", "",
                     {{"Accept", "application/json"}, {"Authorization", "bearer " + kAdminToken}});
  CHECK(lower.status == 200);
}

TEST_CASE("a push token can push, read, cancel and fetch results, and nothing else", "[http]") {
  Fixture f;
  const std::string id = f.push_as(kPushToken);
  CHECK(call(f.http, "GET", "/v1/jobs/" + id, kPushToken).status == 200);
  CHECK(call(f.http, "GET", "/v1/jobs/" + id + "/result", kPushToken).status == 202);
  CHECK(call(f.http, "DELETE", "/v1/jobs/" + id, kPushToken).status == 204);

  auto register_worker = call(f.http, "POST", "/v1/workers", kPushToken, a_worker(1));
  check_error(register_worker, 403, "forbidden");
  const std::string message = register_worker.value()["message"];
  CHECK(message.find("(push)") != std::string::npos);
  CHECK(message.find("use a worker or admin token") != std::string::npos);
  CHECK(register_worker.header("www-authenticate").empty());

  auto queues = call(f.http, "GET", "/v1/queues", kPushToken);
  check_error(queues, 403, "forbidden");
  CHECK(queues.value()["message"].get<std::string>().find("use an admin token") !=
        std::string::npos);
  check_error(call(f.http, "GET", "/v1/stats", kPushToken), 403, "forbidden");
  check_error(call(f.http, "GET", "/v1/workers", kPushToken), 403, "forbidden");
  check_error(call(f.http, "GET", "/v1/dead", kPushToken), 403, "forbidden");
  check_error(call(f.http, "GET", "/v1/constraints", kPushToken), 403, "forbidden");
  check_error(call(f.http, "POST", "/v1/constraints", kPushToken, a_constraint()), 403,
              "forbidden");
}

TEST_CASE("a worker token can register and heartbeat workers, and nothing else", "[http]") {
  Fixture f;
  auto first = call(f.http, "POST", "/v1/workers", kWorkerToken, a_worker(1));
  CHECK(first.status == 201);
  auto heartbeat = call(f.http, "POST", "/v1/workers", kWorkerToken, a_worker(1));
  CHECK(heartbeat.status == 200);
  const std::string worker_id = first.value()["id"];

  auto push = call(f.http, "POST", "/v1/jobs", kWorkerToken, a_job());
  check_error(push, 403, "forbidden");
  CHECK(push.value()["message"].get<std::string>().find("(worker)") != std::string::npos);
  const std::string id = f.push_as(kPushToken);
  check_error(call(f.http, "GET", "/v1/jobs/" + id, kWorkerToken), 403, "forbidden");
  check_error(call(f.http, "GET", "/v1/workers", kWorkerToken), 403, "forbidden");
  check_error(call(f.http, "DELETE", "/v1/workers/" + worker_id, kWorkerToken), 403, "forbidden");
  check_error(call(f.http, "GET", "/v1/queues", kWorkerToken), 403, "forbidden");
  check_error(call(f.http, "GET", "/v1/constraints", kWorkerToken), 403, "forbidden");
  check_error(call(f.http, "PATCH", "/v1/constraints/c1", kWorkerToken, json{{"paused", true}}),
              403, "forbidden");
}

TEST_CASE("an admin token can do everything", "[http]") {
  Fixture f;
  const std::string id = f.push_as(kAdminToken);
  CHECK(call(f.http, "GET", "/v1/jobs/" + id, kAdminToken).status == 200);
  CHECK(call(f.http, "GET", "/v1/jobs/" + id + "/result", kAdminToken).status == 202);
  auto registered = call(f.http, "POST", "/v1/workers", kAdminToken, a_worker(2));
  CHECK(registered.status == 201);
  const std::string worker_id = registered.value()["id"];
  CHECK(call(f.http, "GET", "/v1/workers", kAdminToken).status == 200);
  CHECK(call(f.http, "GET", "/v1/workers/" + worker_id, kAdminToken).status == 200);
  CHECK(call(f.http, "GET", "/v1/queues", kAdminToken).status == 200);
  CHECK(call(f.http, "POST", "/v1/queues/nobody.serves.this/pause", kAdminToken).status == 200);
  CHECK(call(f.http, "POST", "/v1/queues/nobody.serves.this/resume", kAdminToken).status == 200);
  CHECK(call(f.http, "GET", "/v1/dead", kAdminToken).status == 200);
  CHECK(call(f.http, "GET", "/v1/stats", kAdminToken).status == 200);
  CHECK(call(f.http, "DELETE", "/v1/jobs/" + id, kAdminToken).status == 204);
  CHECK(call(f.http, "DELETE", "/v1/workers/" + worker_id, kAdminToken).status == 204);
  CHECK(call(f.http, "POST", "/v1/constraints", kAdminToken, a_constraint()).status == 201);
  CHECK(call(f.http, "GET", "/v1/constraints", kAdminToken).status == 200);
  CHECK(call(f.http, "GET", "/v1/constraints/c1", kAdminToken).status == 200);
  CHECK(call(f.http, "PUT", "/v1/constraints/c1", kAdminToken, a_constraint()).status == 200);
  CHECK(call(f.http, "PATCH", "/v1/constraints/c1", kAdminToken, json{{"paused", true}}).status ==
        200);
  CHECK(call(f.http, "DELETE", "/v1/constraints/c1", kAdminToken).status == 204);
}

TEST_CASE("with auth on, /healthz and /readyz stay open", "[http]") {
  Fixture f;
  CHECK(f.http.get("/healthz").status == 200);
  CHECK(f.http.get("/readyz").status == 200);
  CHECK(call(f.http, "GET", "/healthz", "not-a-configured-token-at-all").status == 200);
}

TEST_CASE("a non-loopback listen address is served with auth and refused without it", "[http]") {
  RedisServer redis;
  jq::test::TempDir dir;
  const std::string redis_yaml = "redis:\n  url: " + redis.url() + "\n";
  std::ofstream(dir.file("open.yaml")) << redis_yaml;
  std::ofstream(dir.file("auth.yaml")) << redis_yaml << kAuthYaml;
  const std::uint16_t port = jq::test::free_port();
  const std::string listen = "0.0.0.0:" + std::to_string(port);

  auto refused = jq::test::run_master({"--config", dir.file("open.yaml"), "--listen", listen});
  CHECK(refused.exit_code == 2);
  CHECK(refused.output.find("allow_open") != std::string::npos);

  jq::test::ChildProcess master(
      {jq::test::master_binary(), "--config", dir.file("auth.yaml"), "--listen", listen},
      dir.file("master.log"));
  HttpClient http(port);
  REQUIRE(serves(master, http));
  check_error(call(http, "GET", "/v1/stats", ""), 401, "unauthorized");
  CHECK(call(http, "GET", "/v1/stats", kAdminToken).status == 200);
  master.signal(SIGTERM);
  CHECK(master.wait(15s) == 0);
}

// docker/jqmaster.image.yaml's choice: an API open on purpose, on every interface. Every /v1
// request was refused (401) while an auth section turned the checks on without tokens.
TEST_CASE("auth.allow_open with no tokens serves the API without tokens on every interface",
          "[http]") {
  RedisServer redis;
  jq::test::TempDir dir;
  std::ofstream(dir.file("open.yaml"))
      << "redis:\n  url: " << redis.url() << "\nauth:\n  allow_open: true\n";
  const std::uint16_t port = jq::test::free_port();
  jq::test::ChildProcess master({jq::test::master_binary(), "--config", dir.file("open.yaml"),
                                 "--listen", "0.0.0.0:" + std::to_string(port)},
                                dir.file("master.log"));
  HttpClient http(port);
  REQUIRE(serves(master, http));
  CHECK(call(http, "POST", "/v1/jobs", "", json{{"name", "open.job"}}).status == 201);
  CHECK(call(http, "GET", "/v1/stats", "").status == 200);
  master.signal(SIGTERM);
  CHECK(master.wait(15s) == 0);
  CHECK(jq::test::read_file(dir.file("master.log")).find("open to anyone") != std::string::npos);
}

TEST_CASE("tokens, good or bad, never appear in the master's log", "[http]") {
  const std::string bad_token = "guessed-token-5d8e2b7a1c";
  Fixture f;
  check_error(call(f.http, "POST", "/v1/jobs", bad_token, a_job()), 401, "unauthorized");
  check_error(call(f.http, "POST", "/v1/workers", kPushToken, a_worker(3)), 403, "forbidden");
  f.push_as(kPushToken);
  CHECK(call(f.http, "POST", "/v1/workers", kWorkerToken, a_worker(3)).status == 201);
  CHECK(call(f.http, "GET", "/v1/stats", kAdminToken).status == 200);
  CHECK(f.daemon.stop(SIGTERM, 15s) == 0);
  const std::string log = f.daemon.log();
  CHECK_FALSE(log.empty());
  for (const std::string& token : {bad_token, kPushToken, kWorkerToken, kAdminToken}) {
    INFO(token);
    CHECK(log.find(token) == std::string::npos);
  }
}
