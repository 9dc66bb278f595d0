// Workers for tests: the real jqworker binary on a port of its choosing, RecordingWorker, an
// endpoint that records what the master sends, and FakeMaster, a stand-in for jqmaster's
// POST /v1/workers that records what workers send when they register.
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
  // jqworker --listen 127.0.0.1:PORT plus `args`; throws with its log when it does not come up.
  // Port 0 lets it pick a free one; a given port starts a worker in the place of a stopped one.
  explicit Worker(const std::vector<std::string>& args = {}, std::uint16_t port = 0);

  std::uint16_t port() const { return port_; }
  pid_t pid() const { return process_.pid(); }
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

// An HTTP server on a free loopback port that records every request and gives each the same
// answer. FakeMaster and RecordingWorker below are its two uses.
class RecordingServer {
 public:
  struct Answer {
    int status = 200;
    std::string content_type;
    std::string body;
  };
  explicit RecordingServer(Answer answer);
  ~RecordingServer();
  RecordingServer(const RecordingServer&) = delete;
  RecordingServer& operator=(const RecordingServer&) = delete;

  std::uint16_t port() const;
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }
  std::vector<RecordedRequest> requests() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A stand-in for jqmaster's POST /v1/workers: answers 201 {"id": "w1"}.
class FakeMaster : public RecordingServer {
 public:
  FakeMaster() : RecordingServer({201, "application/json", R"({"id":"w1"})"}) {}
};

// A worker endpoint that answers every job with success (result null) and keeps each request's
// exact body and headers: what the master sent, byte for byte.
class RecordingWorker : public RecordingServer {
 public:
  RecordingWorker()
      : RecordingServer(
            {200, "application/json",
             R"({"type":"success","finished_at":"2026-01-01T00:00:00Z","result":null})"}) {}
};

}  // namespace jq::test
