// A real redis-server for one test, on a free loopback port, and a blocking client for checks.
#pragma once

#include <csignal>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/redis/keys.hpp"
#include "src/redis/reply.hpp"
#include "src/redis/scripts.hpp"
#include "tests/support/process.hpp"

namespace jq::redis {
class ReplyParser;
}

namespace jq::test {

// Blocking RESP client over a plain socket, using the engine's hiredis codec.
class SyncRedis {
 public:
  explicit SyncRedis(std::uint16_t port);
  ~SyncRedis();
  SyncRedis(const SyncRedis&) = delete;
  SyncRedis& operator=(const SyncRedis&) = delete;

  redis::Reply call(const std::vector<std::string>& args);
  // FCALL, loading the script library when Redis lacks it, as the engine does; calls are built
  // by the script's binding
  // (src/redis/bindings/).
  redis::Reply eval(const redis::ScriptCall& call);
  // The next reply without sending anything: what Redis pushes to a subscribed connection.
  // Throws after the receive timeout (10 s).
  redis::Reply read();

 private:
  int fd_ = -1;
  std::unique_ptr<redis::ReplyParser> parser_;  // kept across calls: one read may hold two replies
};

// With JQ_TEST_REDIS_CLUSTER=1 in the environment every RedisServer is a Redis Cluster of one
// node holding all 16384 slots (--cluster-enabled yes, CLUSTER ADDSLOTSRANGE 0 16383): the
// engine's single-node client works against it unchanged, and Redis 7 refuses, with "Script
// attempted to access keys that do not hash to the same slot", any script that touches keys of
// two hash tags. Running the [redis] and [http] suites that way shows that none does (ctest:
// the *_one_node_cluster entries, tests/CMakeLists.txt).
bool redis_cluster_mode();

class RedisServer {
 public:
  // Starts and waits until it answers PING (in cluster mode: until the cluster is ok);
  // `extra_args` go to redis-server after the usual ones (e.g. {"--appendfsync", "always"}), at
  // every start.
  explicit RedisServer(std::vector<std::string> extra_args = {});
  ~RedisServer();

  std::uint16_t port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_) + "/0"; }
  const std::string& dir() const { return dir_.path(); }
  pid_t pid() const { return process_.pid(); }

  void stop();   // SIGTERM and wait
  void kill();   // SIGKILL and wait: no shutdown; what it already wrote to its files stays
  void start();  // again, on the same port and data dir
  // SIGSTOP / SIGCONT: a hung Redis that keeps its connections open but answers nothing.
  void freeze() { process_.signal(SIGSTOP); }
  void thaw() { process_.signal(SIGCONT); }

 private:
  TempDir dir_;
  std::uint16_t port_;
  std::vector<std::string> extra_args_;
  ChildProcess process_;
};

// One redis-server per test process: started on first use, stopped when the process exits.
inline RedisServer& shared_redis() {
  static RedisServer server;
  return server;
}

// A key schema under a prefix no other test case of this process has used, so test cases
// sharing shared_redis() never see each other's keys.
inline redis::Keys fresh_keys() {
  static int counter = 0;
  return redis::Keys("t" + std::to_string(++counter));
}

// The source of a function library named `name` with one function (<name>_x): what FUNCTION
// LOAD of another build's library leaves in Redis, for tests of what happens to it.
inline std::string minimal_library_source(const std::string& name) {
  return "#!lua name=" + name + "\nredis.register_function('" + name +
         "_x', function() return 1 end)";
}

}  // namespace jq::test
