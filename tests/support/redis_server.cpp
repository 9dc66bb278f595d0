#include "tests/support/redis_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string_view>

#include "src/redis/resp.hpp"
#include "src/redis/script_sources.hpp"

namespace jq::test {

using namespace std::chrono_literals;

SyncRedis::SyncRedis(std::uint16_t port)
    : fd_(connect_loopback(port)), parser_(std::make_unique<redis::ReplyParser>()) {
  if (fd_ < 0) {
    throw std::runtime_error("cannot connect to Redis on port " + std::to_string(port));
  }
  timeval tv{10, 0};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

SyncRedis::~SyncRedis() {
  if (fd_ >= 0) close(fd_);
}

redis::Reply SyncRedis::call(const std::vector<std::string>& args) {
  std::vector<std::string_view> views(args.begin(), args.end());
  std::string frame;
  redis::append_command(frame, views);
  if (!send_all(fd_, frame)) throw std::runtime_error("write to Redis failed");
  return read();
}

redis::Reply SyncRedis::read() {
  char buf[16384];
  for (;;) {
    if (auto reply = parser_->next()) return *reply;
    if (parser_->failed()) throw std::runtime_error("bad reply from Redis");
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) throw std::runtime_error("read from Redis failed");
    parser_->feed(buf, static_cast<std::size_t>(n));
  }
}

redis::Reply SyncRedis::eval(const redis::ScriptCall& script_call) {
  const redis::Script& s = redis::script(script_call.id);
  if (script_call.keys.size() > s.num_keys)
    throw std::logic_error("wrong key count for " + std::string(s.file));
  std::vector<std::string> cmd = {"FCALL", s.function, std::to_string(script_call.keys.size())};
  cmd.insert(cmd.end(), script_call.keys.begin(), script_call.keys.end());
  cmd.insert(cmd.end(), script_call.args.begin(), script_call.args.end());
  redis::Reply r = call(cmd);
  if (redis::lost_library(r)) {
    call({"FUNCTION", "LOAD", std::string(redis::library_source())});
    r = call(cmd);
  }
  return r;
}

bool redis_cluster_mode() {
  const char* v = std::getenv("JQ_TEST_REDIS_CLUSTER");
  return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

// A free port is only free when it is chosen: another process (a parallel test's outgoing
// connection takes an ephemeral port from the same range) may bind it before redis-server does.
// The first start then tries again on fresh ports, its own and a given cluster bus port.
RedisServer::RedisServer(std::vector<std::string> extra_args)
    : port_(free_port()), extra_args_(std::move(extra_args)) {
  for (int attempt = 1;; ++attempt) {
    try {
      start();
      return;
    } catch (const std::runtime_error&) {
      const bool taken =
          read_file(dir_.file("redis.log")).find("Address already in use") != std::string::npos;
      if (!taken || attempt == 3) throw;
    }
    std::filesystem::remove(dir_.file("nodes.conf"));  // a cluster node's, naming the old port
    std::filesystem::remove(dir_.file("redis.log"));
    port_ = free_port();
    for (std::size_t i = 0; i + 1 < extra_args_.size(); ++i) {
      if (extra_args_[i] == "--cluster-port") extra_args_[i + 1] = std::to_string(free_port());
    }
  }
}

RedisServer::~RedisServer() {
  stop();
}

void RedisServer::start() {
  std::vector<std::string> argv = {"redis-server", "--port", std::to_string(port_)};
  // A replica syncs at once: Redis's default waits 5 s for more replicas to share the transfer.
  const std::vector<std::string> usual = {"--bind",
                                          "127.0.0.1",
                                          "--dir",
                                          dir_.path(),
                                          "--save",
                                          "",
                                          "--appendonly",
                                          "yes",
                                          "--daemonize",
                                          "no",
                                          "--repl-diskless-sync-delay",
                                          "0"};
  argv.insert(argv.end(), usual.begin(), usual.end());
  const bool cluster = redis_cluster_mode();
  if (cluster) {
    // The bus port is given: the default, port + 10000, does not exist above 55535.
    const std::vector<std::string> one_node = {
        "--cluster-enabled",     "yes",
        "--cluster-config-file", dir_.file("nodes.conf"),
        "--cluster-port",        std::to_string(free_port())};
    argv.insert(argv.end(), one_node.begin(), one_node.end());
  }
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  process_ = ChildProcess(argv, dir_.file("redis.log"));
  const bool up = wait_until(
      [&] {
        if (!process_.running()) return true;  // it stopped: say why below, without waiting
        try {
          SyncRedis r(port_);
          return r.call({"PING"}).str == "PONG";
        } catch (const std::exception&) {
          return false;
        }
      },
      10s);
  if (!up || !process_.running())
    throw std::runtime_error("redis-server did not start: " + read_file(dir_.file("redis.log")));
  if (!cluster) return;
  // The node takes every slot (again after a restart its nodes.conf has them: "busy", ignored).
  SyncRedis(port_).call({"CLUSTER", "ADDSLOTSRANGE", "0", "16383"});
  const bool ok = wait_until(
      [&] {
        return SyncRedis(port_).call({"CLUSTER", "INFO"}).str.find("cluster_state:ok") !=
               std::string::npos;
      },
      10s);
  if (!ok) throw std::runtime_error("the one-node cluster did not come up");
}

void RedisServer::stop() {
  process_.signal(SIGTERM);
  if (!process_.wait(10s)) process_.kill_and_wait();
}

void RedisServer::kill() {
  process_.kill_and_wait();
}

}  // namespace jq::test
