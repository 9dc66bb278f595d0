#include "tests/support/redis_cluster.hpp"

#include <algorithm>
#include <stdexcept>

namespace jq::test {
namespace {

using namespace std::chrono_literals;

// The cluster bus port is given (Redis 7): the default, port + 10000, does not exist for the
// free ports above 55535.
std::vector<std::string> node_args() {
  return {"--cluster-port",
          std::to_string(free_port()),
          "--cluster-enabled",
          "yes",
          "--cluster-config-file",
          "nodes.conf",
          "--cluster-node-timeout",
          std::to_string(RedisCluster::kNodeTimeoutMs),
          "--cluster-require-full-coverage",
          "no",
          "--appendfsync",
          "everysec"};
}

}  // namespace

RedisCluster::RedisCluster() {
  for (int i = 0; i < 6; ++i) {
    auto node = std::make_unique<RedisServer>(node_args());
    ports_.push_back(node->port());
    nodes_.emplace(node->port(), std::move(node));
  }
  std::vector<std::string> argv = {"redis-cli", "--cluster", "create"};
  for (std::uint16_t p : ports_) argv.push_back("127.0.0.1:" + std::to_string(p));
  argv.insert(argv.end(), {"--cluster-replicas", "1", "--cluster-yes"});
  ChildProcess create(argv, dir_.file("create.log"));
  const auto code = create.wait(60s);
  if (code != 0) {
    throw std::runtime_error("redis-cli --cluster create failed: " +
                             read_file(dir_.file("create.log")));
  }
  if (!wait_ok(30s)) throw std::runtime_error("the cluster did not become ok: " + logs());
  // Replicas attached and in sync, so WAIT 1 can be confirmed from the start.
  const bool synced = wait_until(
      [&] {
        for (std::uint16_t m : masters()) {
          const std::string info = call(m, {"INFO", "replication"}).str;
          if (info.find("connected_slaves:1") == std::string::npos ||
              info.find("state=online") == std::string::npos) {
            return false;
          }
        }
        return true;
      },
      30s, 20ms);
  if (!synced) throw std::runtime_error("the replicas did not sync: " + logs());
}

RedisCluster::~RedisCluster() = default;

std::string RedisCluster::url() const {
  return "redis+cluster://127.0.0.1:" + std::to_string(ports_[0]) +
         ",127.0.0.1:" + std::to_string(ports_[1]);
}

redis::Reply RedisCluster::call(std::uint16_t port, const std::vector<std::string>& args) {
  SyncRedis r(port);
  return r.call(args);
}

bool RedisCluster::running(std::uint16_t port) const {
  return !down_.contains(port);
}

std::uint16_t RedisCluster::any_live() const {
  for (std::uint16_t p : ports_) {
    if (running(p)) return p;
  }
  throw std::logic_error("no live cluster node");
}

std::vector<std::uint16_t> RedisCluster::masters() {
  std::vector<std::uint16_t> out;
  const redis::Reply slots = call(any_live(), {"CLUSTER", "SLOTS"});
  for (const redis::Reply& range : slots.elements) {
    const auto port = static_cast<std::uint16_t>(range.elements[2].elements[1].integer);
    if (std::find(out.begin(), out.end(), port) == out.end()) out.push_back(port);
  }
  return out;
}

std::vector<int> RedisCluster::slots_of(std::uint16_t master_port) {
  std::vector<int> out;
  const redis::Reply slots = call(any_live(), {"CLUSTER", "SLOTS"});
  for (const redis::Reply& range : slots.elements) {
    if (range.elements[2].elements[1].integer != master_port) continue;
    for (auto s = range.elements[0].integer; s <= range.elements[1].integer; ++s) {
      out.push_back(static_cast<int>(s));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::uint16_t RedisCluster::master_of(int slot) {
  const redis::Reply slots = call(any_live(), {"CLUSTER", "SLOTS"});
  for (const redis::Reply& range : slots.elements) {
    if (range.elements[0].integer <= slot && slot <= range.elements[1].integer) {
      return static_cast<std::uint16_t>(range.elements[2].elements[1].integer);
    }
  }
  throw std::runtime_error("slot " + std::to_string(slot) + " has no master");
}

std::uint16_t RedisCluster::replica_of(std::uint16_t master_port) {
  for (std::uint16_t p : ports_) {
    if (!running(p) || p == master_port) continue;
    const std::string info = call(p, {"INFO", "replication"}).str;
    if (info.find("role:slave") != std::string::npos &&
        info.find("master_port:" + std::to_string(master_port) + "\r") != std::string::npos) {
      return p;
    }
  }
  throw std::runtime_error("no replica of the master on port " + std::to_string(master_port));
}

std::string RedisCluster::node_id(std::uint16_t port) {
  return call(port, {"CLUSTER", "MYID"}).str;
}

void RedisCluster::kill(std::uint16_t port) {
  nodes_.at(port)->kill();
  down_.insert(port);
}

void RedisCluster::start(std::uint16_t port) {
  nodes_.at(port)->start();
  down_.erase(port);
}

bool RedisCluster::wait_ok(std::chrono::milliseconds timeout) {
  return wait_until(
      [&] {
        try {
          for (std::uint16_t p : ports_) {
            if (!running(p)) continue;
            const std::string info = call(p, {"CLUSTER", "INFO"}).str;
            if (info.find("cluster_state:ok") == std::string::npos) return false;
          }
          // Every slot served by a live master (a failed master's slots taken over).
          int covered = 0;
          const redis::Reply slots = call(any_live(), {"CLUSTER", "SLOTS"});
          for (const redis::Reply& range : slots.elements) {
            const auto port = static_cast<std::uint16_t>(range.elements[2].elements[1].integer);
            if (!running(port)) return false;
            covered += static_cast<int>(range.elements[1].integer - range.elements[0].integer + 1);
          }
          return covered == 16384;
        } catch (const std::exception&) {
          return false;
        }
      },
      timeout, 20ms);
}

ChildProcess RedisCluster::reshard(std::uint16_t from, std::uint16_t to, int slots) {
  const std::vector<std::string> argv = {
      "redis-cli",       "--cluster",           "reshard",      "127.0.0.1:" + std::to_string(from),
      "--cluster-from",  node_id(from),         "--cluster-to", node_id(to),
      "--cluster-slots", std::to_string(slots), "--cluster-yes"};
  return ChildProcess(argv, dir_.file("reshard-" + std::to_string(from) + ".log"));
}

std::string RedisCluster::logs() const {
  std::string out;
  for (std::uint16_t p : ports_) {
    out += "--- node " + std::to_string(p) + "\n" + read_file(nodes_.at(p)->dir() + "/redis.log");
  }
  return out;
}

}  // namespace jq::test
