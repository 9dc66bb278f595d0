// The master serving HTTPS (tls.cert, tls.key): requests over TLS, plain HTTP refused with a
// reason, certificates reloaded on SIGHUP (or kept when the new files are bad), bad files at
// start, and jqctl as an HTTPS client.
#include <catch2/catch.hpp>

#include <csignal>
#include <fstream>
#include <optional>

#include "tests/support/daemon.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/tls.hpp"
#include "tests/support/tls_client.hpp"

using jq::test::ctl_binary;
using jq::test::Daemon;
using jq::test::DaemonOptions;
using jq::test::free_port;
using jq::test::HttpClient;
using jq::test::ProgramResult;
using jq::test::RedisServer;
using jq::test::run_master;
using jq::test::run_program;
using jq::test::TempDir;
using jq::test::TestCa;
using jq::test::TlsConnection;
using jq::test::wait_until;
using namespace std::chrono_literals;

namespace {

constexpr int kExitBadConfig = 2;
constexpr int kExitUnavailable = 5;  // jqctl's

std::string tls_yaml(const std::string& cert, const std::string& key) {
  return "tls:\n  cert: " + cert + "\n  key: " + key + "\n";
}

// A master serving HTTPS with a certificate for CN "first", in files the test may replace.
struct TlsMaster {
  TlsMaster() {
    ca.issue("first", cert, key);
    daemon.emplace(DaemonOptions{
        .redis_url = redis.url(), .extra_yaml = tls_yaml(cert, key), .tls_ca_file = ca.ca_file()});
  }

  // Sends SIGHUP and waits for the log line that says how the reload went.
  void hang_up(const std::string& expected_line) {
    REQUIRE(::kill(daemon->pid(), SIGHUP) == 0);
    REQUIRE(daemon->logged(expected_line, 5s));
  }

  TestCa ca;
  TempDir dir;
  std::string cert = dir.file("server.pem");
  std::string key = dir.file("server.key");
  RedisServer redis;
  std::optional<Daemon> daemon;
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("with tls.cert and tls.key the master serves its API over HTTPS", "[http]") {
  TlsMaster m;
  TlsConnection c(m.daemon->port(), m.ca.ca_file());
  CHECK(c.peer_common_name() == "first");
  const auto pushed = c.request("POST", "/v1/jobs", R"({"name": "tls.job"})",
                                {{"Content-Type", "application/json"}});
  CHECK(pushed.status == 201);
  CHECK(c.get("/v1/jobs/" + pushed.value()["id"].get<std::string>()).status == 200);
  CHECK(contains(m.daemon->log(), "(https)"));
}

TEST_CASE("plain HTTP sent to the HTTPS port gets a 400 that says to use https://", "[http]") {
  TlsMaster m;
  const auto r = HttpClient(m.daemon->port()).get("/healthz");
  CHECK(r.status == 400);
  CHECK(contains(r.body, "https://"));
  CHECK(m.daemon->http().get("/healthz").status == 200);  // and HTTPS still works
}

TEST_CASE("SIGHUP reloads the certificate for new connections while open ones keep theirs",
          "[http]") {
  TlsMaster m;
  TlsConnection before(m.daemon->port(), m.ca.ca_file());
  REQUIRE(before.get("/healthz").status == 200);

  m.ca.issue("second", m.cert, m.key);
  m.hang_up("tls reloaded; new connections get the certificate CN=second");

  TlsConnection after(m.daemon->port(), m.ca.ca_file());
  CHECK(after.peer_common_name() == "second");
  CHECK(after.get("/healthz").status == 200);
  // The connection opened before the reload goes on with its own certificate.
  CHECK(before.get("/healthz").status == 200);
  CHECK(before.peer_common_name() == "first");
}

TEST_CASE("a SIGHUP with a broken key keeps the certificate in use and logs what to fix",
          "[http]") {
  TlsMaster m;
  std::ofstream(m.key) << "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n";
  m.hang_up("tls not reloaded, still serving the previous certificate: tls.key");
  CHECK(contains(m.daemon->log(), "fix the file and send SIGHUP again"));

  TlsConnection c(m.daemon->port(), m.ca.ca_file());
  CHECK(c.peer_common_name() == "first");
  CHECK(c.get("/healthz").status == 200);

  // Once the files are right again, the next SIGHUP takes them.
  m.ca.issue("third", m.cert, m.key);
  m.hang_up("new connections get the certificate CN=third");
  CHECK(TlsConnection(m.daemon->port(), m.ca.ca_file()).peer_common_name() == "third");
}

TEST_CASE("a missing tls.cert or a key that does not match stops the start naming the key",
          "[http]") {
  TestCa ca;
  TempDir dir;
  ca.issue("one", dir.file("one.pem"), dir.file("one.key"));
  ca.issue("two", dir.file("two.pem"), dir.file("two.key"));
  struct Case {
    std::string cert;
    std::string key;
    std::string message;
  };
  const Case cases[] = {
      {dir.file("missing.pem"), dir.file("one.key"),
       "config: tls.cert: cannot read \"" + dir.file("missing.pem") + "\""},
      {dir.file("one.pem"), dir.file("two.key"),
       "config: tls.key: \"" + dir.file("two.key") + "\" is not the private key of tls.cert"},
      {dir.file("one.key"), dir.file("one.key"),
       "config: tls.cert: \"" + dir.file("one.key") + "\" holds no PEM certificate"},
  };
  for (const Case& c : cases) {
    INFO(c.message);
    const std::string config = dir.file("jqmaster.yaml");
    std::ofstream(config) << "listen: 127.0.0.1:" << free_port() << "\n" << tls_yaml(c.cert, c.key);
    const auto r = run_master({"--config", config});
    CHECK(r.exit_code == kExitBadConfig);
    CHECK(contains(r.output, c.message));
  }
}

TEST_CASE("jqctl talks to an HTTPS master with --cacert, and says why without it", "[http]") {
  TlsMaster m;
  const std::string url = "https://localhost:" + std::to_string(m.daemon->port());
  const ProgramResult ok =
      run_program({ctl_binary(), "--url", url, "--cacert", m.ca.ca_file(), "stats"});
  INFO("stdout: " << ok.out << "stderr: " << ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(contains(ok.out, "\"pushed\""));

  const ProgramResult from_env =
      run_program({ctl_binary(), "stats"}, {"JQ_URL=" + url, "JQ_CACERT=" + m.ca.ca_file()});
  CHECK(from_env.exit_code == 0);

  const ProgramResult unverified = run_program({ctl_binary(), "--url", url, "stats"});
  INFO("stderr: " << unverified.err);
  CHECK(unverified.exit_code == kExitUnavailable);
  CHECK(contains(unverified.err, "certificate"));
  CHECK(contains(unverified.err, "--cacert"));
}
