// A real Redis Cluster for tests: six redis-servers with cluster-enabled on free loopback ports
// (three masters, three replicas, cluster-node-timeout 2000 ms), joined by
// `redis-cli --cluster create ... --cluster-replicas 1 --cluster-yes`, stopped by PID.
// cluster-require-full-coverage is off, as README "Scaling out" recommends: a node that fails
// stops only its own slots, not the whole cluster.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tests/support/process.hpp"
#include "tests/support/redis_server.hpp"

namespace jq::test {

class RedisCluster {
 public:
  static constexpr int kNodeTimeoutMs = 2000;

  RedisCluster();
  ~RedisCluster();
  RedisCluster(const RedisCluster&) = delete;
  RedisCluster& operator=(const RedisCluster&) = delete;

  // redis+cluster:// with two seeds.
  std::string url() const;
  const std::vector<std::uint16_t>& ports() const { return ports_; }

  // From CLUSTER SLOTS of a live node: the port of the master serving `slot`, every master's.
  std::uint16_t master_of(int slot);
  std::vector<std::uint16_t> masters();
  std::vector<int> slots_of(std::uint16_t master_port);  // ascending
  std::uint16_t replica_of(std::uint16_t master_port);
  std::string node_id(std::uint16_t port);

  // kill -9 of the node on `port` (no shutdown, nothing saved); start() brings it back on its
  // port and files (it rejoins as a replica when it was failed over).
  void kill(std::uint16_t port);
  void start(std::uint16_t port);
  bool running(std::uint16_t port) const;

  // Every live node says cluster_state:ok and every slot has a live master, within `timeout`.
  bool wait_ok(std::chrono::milliseconds timeout);

  // Starts `redis-cli --cluster reshard` moving `slots` slots from one master to another; the
  // returned process runs while the test goes on (wait() on it).
  ChildProcess reshard(std::uint16_t from, std::uint16_t to, int slots);

  std::string logs() const;  // every node's log, for a failed test's message

 private:
  redis::Reply call(std::uint16_t port, const std::vector<std::string>& args);
  std::uint16_t any_live() const;

  TempDir dir_;
  std::vector<std::uint16_t> ports_;
  std::map<std::uint16_t, std::unique_ptr<RedisServer>> nodes_;
  std::set<std::uint16_t> down_;  // killed and not started again
};

}  // namespace jq::test
