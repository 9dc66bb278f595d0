// What stops the start: bad flags and config (exit 2), a store made with other shards (exit 1).
#include <catch2/catch.hpp>

#include <fstream>

#include "tests/support/daemon.hpp"
#include "tests/support/redis_server.hpp"

using namespace std::chrono_literals;
using jq::test::run_master;

TEST_CASE("an unknown config key stops the start with exit code 2 naming the key", "[http]") {
  jq::test::TempDir dir;
  std::ofstream(dir.file("c.yaml")) << "retry:\n  bsae: 2\n";
  auto r = run_master({"--config", dir.file("c.yaml")});
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("retry.bsae") != std::string::npos);
}

TEST_CASE("a wrong value from the environment stops the start naming it", "[http]") {
  auto r = run_master({}, {"JQ_LOG_LEVEL=loud"});
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("JQ_LOG_LEVEL") != std::string::npos);
}

TEST_CASE("bad flags exit 2, --version and --help exit 0", "[http]") {
  CHECK(run_master({"--no-such-flag"}).exit_code == 2);
  auto version = run_master({"--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.output.find("jqmaster") != std::string::npos);
  auto help = run_master({"--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.output.find("--redis-url") != std::string::npos);
}

TEST_CASE("flags beat the environment", "[http]") {
  // The flag's valid level wins over the environment's invalid one, so the start goes on and
  // fails later for another reason (the port is taken by nothing: use a bad Redis URL instead).
  auto r = run_master({"--log-level", "debug", "--redis-url", "http://x"}, {"JQ_LOG_LEVEL=loud"});
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("JQ_LOG_LEVEL") == std::string::npos);
}

TEST_CASE("a master with another shard count than the store refuses to run", "[http]") {
  jq::test::RedisServer redis;
  { jq::test::Daemon first({redis.url(), 4}); }
  jq::test::TempDir dir;
  std::ofstream(dir.file("c.yaml")) << "shards: 8\nlisten: 127.0.0.1:" << jq::test::free_port()
                                    << "\nredis:\n  url: " << redis.url() << "\n";
  auto r = run_master({"--config", dir.file("c.yaml")});
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("shards: 4") != std::string::npos);
}

TEST_CASE("a master refuses a store written in another data layout", "[http]") {
  jq::test::RedisServer redis;
  {
    jq::test::SyncRedis r(redis.port());
    r.call({"HSET", "jq:meta", "shards", "16", "version", "1"});  // an older release's store
  }
  auto r = run_master({"--redis-url", redis.url(), "--listen",
                       "127.0.0.1:" + std::to_string(jq::test::free_port())});
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("data layout 1") != std::string::npos);
  CHECK(r.output.find("another Redis database") != std::string::npos);
}
