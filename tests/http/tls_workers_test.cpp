// https workers end to end: the real daemon and Redis, an HTTPS worker (tls_worker.py) serving a
// certificate from a throwaway CA made for each test.
#include <catch2/catch.hpp>

#include <fstream>

#include "tests/support/daemon.hpp"
#include "tests/support/job_calls.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/tls.hpp"

using namespace std::chrono_literals;
using jq::test::Daemon;
using jq::test::HttpClient;
using jq::test::push;
using jq::test::RedisServer;
using jq::test::TestCa;
using jq::test::TlsWorker;
using jq::test::wait_until;
using nlohmann::json;

namespace {

const std::string kLocalNames = "IP:127.0.0.1,DNS:localhost";

std::string register_https(const HttpClient& http, const TlsWorker& worker,
                           const std::string& ca_file, int concurrency = 1) {
  json body = {{"url", worker.url()}, {"names", {"n"}}, {"concurrency", concurrency}};
  if (!ca_file.empty()) body["ca_file"] = ca_file;
  auto res = http.post("/v1/workers", body);
  REQUIRE((res.status == 201 || res.status == 200));
  return res.value()["id"];
}

json result_of(const HttpClient& http, const std::string& id) {
  auto res = http.get("/v1/jobs/" + id + "/result?wait=10");
  REQUIRE(res.status == 200);
  return res.value();
}

// The endpoint turned unhealthy; returns its last_error.
std::string unhealthy_error(const HttpClient& http, const std::string& worker_id) {
  json seen;
  REQUIRE(wait_until(
      [&] {
        seen = http.get("/v1/workers/" + worker_id).value();
        return seen["healthy"] == false && seen["last_error"].is_string();
      },
      10s));
  return seen["last_error"];
}

}  // namespace

TEST_CASE("an https worker registered with its ca_file runs jobs over kept-alive connections",
          "[http]") {
  TestCa ca;
  TlsWorker worker(ca.issue(kLocalNames));
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  const std::string worker_id = register_https(http, worker, ca.ca_file());
  CHECK(http.get("/v1/workers/" + worker_id).value()["ca_file"] == ca.ca_file());

  constexpr int kJobs = 5;
  for (int i = 0; i < kJobs; ++i) {
    const std::string id = push(http, {{"name", "n"}, {"argument", i}, {"keep_result", true}});
    const json result = result_of(http, id);
    CHECK(result["type"] == "success");
    CHECK(result["result"] == i);
  }
  CHECK(worker.jobs() == kJobs);
  // One job at a time (concurrency 1), so one connection serves them all.
  CHECK(worker.connections() == 1);
}

TEST_CASE("an https worker whose certificate does not verify gets no job and is unhealthy",
          "[http]") {
  TestCa ca;
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();

  SECTION("its CA is not in the system store") {
    TlsWorker worker(ca.issue(kLocalNames));
    const std::string worker_id = register_https(http, worker, "");
    const std::string id = push(http, {{"name", "n"}, {"keep_result", true}});
    const std::string error = unhealthy_error(http, worker_id);
    CHECK_THAT(error, Catch::StartsWith("TLS: certificate verify failed ("));
    CHECK_THAT(error, Catch::EndsWith(") for https://127.0.0.1:" + std::to_string(worker.port())));
    const json job = http.get("/v1/jobs/" + id).value();
    CHECK(job["state"] == "queued");
    CHECK(job["attempts"] == 0);
    CHECK(worker.jobs() == 0);

    // Registered again with the CA, the same endpoint runs the job it held back.
    register_https(http, worker, ca.ca_file());
    CHECK(result_of(http, id)["type"] == "success");
    CHECK(worker.jobs() == 1);
  }

  SECTION("its certificate names another host") {
    TlsWorker worker(ca.issue("DNS:worker.example"));
    const std::string worker_id = register_https(http, worker, ca.ca_file());
    const std::string id = push(http, {{"name", "n"}});
    CHECK_THAT(unhealthy_error(http, worker_id),
               Catch::StartsWith("TLS: certificate verify failed (IP address mismatch)"));
    CHECK(http.get("/v1/jobs/" + id).value()["attempts"] == 0);
    CHECK(worker.jobs() == 0);
  }
}

TEST_CASE("tls.ca_file and a static worker's ca_file from the config are trusted", "[http]") {
  TestCa ca;
  TlsWorker by_default(ca.issue(kLocalNames));
  TlsWorker by_worker(ca.issue(kLocalNames));
  RedisServer redis;
  // The static worker serves "s" with its own ca_file; the registered one "n" with tls.ca_file.
  Daemon daemon({redis.url(), 4,
                 "tls:\n  ca_file: " + ca.ca_file() + "\nworkers:\n  - url: " + by_worker.url() +
                     "\n    names: [s]\n    ca_file: " + ca.ca_file() + "\n"});
  auto http = daemon.http();
  register_https(http, by_default, "");
  CHECK(result_of(http, push(http, {{"name", "n"}, {"keep_result", true}}))["type"] == "success");
  CHECK(result_of(http, push(http, {{"name", "s"}, {"keep_result", true}}))["type"] == "success");
  CHECK(by_default.jobs() == 1);
  CHECK(by_worker.jobs() == 1);
}

TEST_CASE("jqctl workers register --ca-file registers an https worker that runs jobs", "[http]") {
  TestCa ca;
  TlsWorker worker(ca.issue(kLocalNames));
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  const auto r = jq::test::run_program(
      {jq::test::ctl_binary(), "--url", "http://127.0.0.1:" + std::to_string(daemon.port()),
       "workers", "register", "--url", worker.url(), "--names", "n", "--ca-file", ca.ca_file()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string worker_id = json::parse(r.out)["id"];
  CHECK(http.get("/v1/workers/" + worker_id).value()["ca_file"] == ca.ca_file());
  CHECK(result_of(http, push(http, {{"name", "n"}, {"keep_result", true}}))["type"] == "success");
}

TEST_CASE("a ca_file the master cannot use is refused at registration, naming ca_file", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  auto http = daemon.http();
  jq::test::TempDir dir;
  std::ofstream(dir.file("not.pem")) << "not a certificate\n";
  const std::string url = "https://127.0.0.1:" + std::to_string(jq::test::free_port()) + "/";
  struct Case {
    std::string url;
    std::string ca_file;
    std::string says;
  };
  for (const Case& c :
       {Case{url, dir.file("missing.pem"), "No such file or directory"},
        Case{url, dir.file("not.pem"), "holds no PEM certificate"},
        Case{url, dir.path(), "must be a regular file"},
        Case{"http://127.0.0.1:9/", dir.file("not.pem"), "https:// workers only"}}) {
    INFO(c.ca_file);
    auto res = http.post("/v1/workers", {{"url", c.url}, {"names", {"n"}}, {"ca_file", c.ca_file}});
    CHECK(res.status == 400);
    CHECK(res.value()["field"] == "ca_file");
    CHECK_THAT(res.value()["message"].get<std::string>(), Catch::Contains(c.says));
  }
  CHECK(http.get("/v1/workers").value().empty());
}

TEST_CASE("a tls.ca_file that cannot be read stops the start naming the key", "[http]") {
  jq::test::TempDir dir;
  std::ofstream(dir.file("c.yaml")) << "tls:\n  ca_file: " << dir.file("missing.pem") << "\n";
  auto r = jq::test::run_master({"--config", dir.file("c.yaml")});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("config: tls.ca_file: cannot be read: "));
}
