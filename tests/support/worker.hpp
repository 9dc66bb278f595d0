// Workers for tests: the real jqworker binary on a port of its choosing, and FakeMaster, a
// stand-in for jqmaster's POST /v1/workers that records what workers send when they register.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/http_client.hpp"
#include "tests/support/process.hpp"

namespace jq::test {

std::string worker_binary();
// examples/python/worker.py in the source tree.
std::string python_worker_script();

// Waits for the "listening on HOST:PORT" line that jqworker and worker.py print once they
// listen; nullopt when the process died or `timeout` passed first.
std::optional<std::uint16_t> wait_for_listening_port(ChildProcess& process,
                                                     const std::string& log_file,
                                                     std::chrono::milliseconds timeout);

class Worker {
 public:
  // jqworker --listen 127.0.0.1:0 plus `args`; throws with its log when it does not come up.
  explicit Worker(const std::vector<std::string>& args = {});

  std::uint16_t port() const { return port_; }
  HttpClient http() const { return HttpClient(port_); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }
  std::string log() const { return read_file(dir_.file("jqworker.log")); }
  nlohmann::json stats() const;
  void reset_stats() const;
  // Sends `signo` and waits for the exit code (nullopt: still running after the timeout).
  std::optional<int> stop(int signo, std::chrono::milliseconds timeout);

 private:
  TempDir dir_;
  ChildProcess process_;
  std::uint16_t port_ = 0;
};

struct RecordedRequest {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

// Answers every request with 201 {"id": "w1"} and records it.
class FakeMaster {
 public:
  FakeMaster();
  ~FakeMaster();
  FakeMaster(const FakeMaster&) = delete;
  FakeMaster& operator=(const FakeMaster&) = delete;

  std::uint16_t port() const;
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }
  std::vector<RecordedRequest> requests() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace jq::test
