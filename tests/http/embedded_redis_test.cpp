// With no redis.url the daemon runs its own redis-server and stops it on exit.
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>

#include "tests/support/daemon.hpp"

using namespace std::chrono_literals;
using jq::test::Daemon;
using jq::test::DaemonOptions;

namespace {

bool process_exists(pid_t pid) {
  return pid > 0 && kill(pid, 0) == 0;
}

pid_t embedded_pid(const std::string& log) {
  auto at = log.find("embedded redis-server (pid ");
  if (at == std::string::npos) return -1;
  return static_cast<pid_t>(std::stol(log.substr(at + 27)));
}

// The exit code of a master whose embedded Redis got `signo` (and the master SIGTERM too when
// `master_too`); nullopt when it did not stop within 20 s.
std::optional<int> exit_after_redis_signal(Daemon& daemon, int signo, bool master_too) {
  const pid_t redis_pid = embedded_pid(daemon.log());
  REQUIRE(process_exists(redis_pid));
  kill(redis_pid, signo);
  if (master_too) kill(daemon.pid(), SIGTERM);
  return daemon.wait_exit(20s);
}

}  // namespace

TEST_CASE("the embedded Redis serves jobs, keeps them across restarts and stops with the master",
          "[http]") {
  jq::test::TempDir dir;
  const std::string data = dir.file("data");
  std::string id;
  pid_t redis_pid = -1;
  {
    Daemon daemon({.data_dir = data});
    auto pushed = daemon.http().post("/v1/jobs", {{"name", "n"}});
    REQUIRE(pushed.status == 201);
    id = pushed.value()["id"];
    redis_pid = embedded_pid(daemon.log());
    REQUIRE(process_exists(redis_pid));
    CHECK(std::filesystem::exists(data + "/appendonlydir"));
    // A full embedded Redis refuses new jobs rather than evict any, so the master says nothing.
    auto policy = jq::test::run_program(
        {"redis-cli", "-s", data + "/redis.sock", "CONFIG", "GET", "maxmemory-policy"});
    CHECK(policy.out.find("noeviction") != std::string::npos);
    CHECK(daemon.log().find("maxmemory-policy") == std::string::npos);
    CHECK(daemon.stop(SIGINT, 15s) == 0);
    CHECK(daemon.log().find("embedded redis-server stopped") != std::string::npos);
  }
  CHECK_FALSE(process_exists(redis_pid));
  Daemon again({.data_dir = data});
  CHECK(again.http().get("/v1/jobs/" + id).value()["state"] == "queued");
}

TEST_CASE("a missing redis-server is reported with what to do", "[http]") {
  jq::test::TempDir dir;
  std::ofstream(dir.file("c.yaml")) << "redis:\n  server_path: /nonexistent/redis-server\n"
                                    << "data_dir: " << dir.file("d") << "\n";
  auto run = jq::test::run_master({"--config", dir.file("c.yaml"), "--listen",
                                   "127.0.0.1:" + std::to_string(jq::test::free_port())});
  CHECK(run.exit_code == 1);
  CHECK(run.output.find("apt-get install redis-server") != std::string::npos);
  CHECK(run.output.find("redis.url") != std::string::npos);
}

// Without its Redis the master can store nothing: it stops, non-zero, saying why, so that a
// supervisor (or whoever started it) starts it again. It used to answer 503 for ever, the dead
// redis-server a zombie beside it.
TEST_CASE("a master whose embedded Redis dies stops with a non-zero exit code saying why",
          "[http]") {
  jq::test::TempDir dir;
  Daemon daemon({.data_dir = dir.file("data")});
  const auto code = exit_after_redis_signal(daemon, SIGKILL, false);
  REQUIRE(code.has_value());
  CHECK(*code == 1);
  CHECK(daemon.log().find("exited (killed by signal 9) while the master ran") != std::string::npos);
}

// Stopped by someone (redis-cli shutdown, a stray kill): still a failure for the master, so that
// a supervisor that restarts on failure starts it again.
TEST_CASE("a master whose embedded Redis is stopped on its own stops with exit code 1", "[http]") {
  jq::test::TempDir dir;
  Daemon daemon({.data_dir = dir.file("data")});
  const auto code = exit_after_redis_signal(daemon, SIGTERM, false);
  REQUIRE(code.has_value());
  CHECK(*code == 1);
  CHECK(daemon.log().find("exited (exit status 0) while the master ran") != std::string::npos);
}

// systemd stops a service by sending SIGTERM to each of its processes at once: the Redis exiting
// first is no crash, and the stop is a clean one (it was an immediate exit 1 in review).
TEST_CASE("SIGTERM to the master and its embedded Redis at once is a clean stop", "[http]") {
  jq::test::TempDir dir;
  Daemon daemon({.data_dir = dir.file("data")});
  const auto code = exit_after_redis_signal(daemon, SIGTERM, true);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  CHECK(daemon.log().find("again: stopping at once") == std::string::npos);
}

// A second master on the same data_dir used to connect to the first one's Redis (its socket
// answers), start a redis-server of its own on the same append-only file, and lose its store
// when the first stopped.
TEST_CASE("a second master on the same data_dir is refused, naming it", "[http]") {
  jq::test::TempDir dir;
  const std::string data = dir.file("data");
  Daemon first({.data_dir = data});
  std::ofstream(dir.file("c.yaml")) << "data_dir: " << data << "\n";
  auto second = jq::test::run_master({"--config", dir.file("c.yaml"), "--listen",
                                      "127.0.0.1:" + std::to_string(jq::test::free_port())});
  CHECK(second.exit_code == 2);
  CHECK(second.output.find("is in use by another jqmaster") != std::string::npos);
  CHECK(first.ready());
  CHECK(first.http().post("/v1/jobs", {{"name", "n"}}).status == 201);
}

TEST_CASE("a data_dir that is not a directory stops the start, naming data_dir", "[http]") {
  jq::test::TempDir dir;
  std::ofstream(dir.file("a-file")) << "x";
  std::ofstream(dir.file("c.yaml")) << "data_dir: " << dir.file("a-file") << "\n";
  auto run = jq::test::run_master({"--config", dir.file("c.yaml"), "--listen",
                                   "127.0.0.1:" + std::to_string(jq::test::free_port())});
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("config: data_dir " + dir.file("a-file")) != std::string::npos);
}
