// The real jqmaster binary for a test: its own config file, port and data dir.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/http_client.hpp"
#include "tests/support/process.hpp"

namespace jq::test {

struct DaemonOptions {
  std::string redis_url{};  // empty: the daemon starts its embedded redis-server
  int shards = 4;
  std::string extra_yaml{};  // appended to the generated config file
  bool wait_ready{true};     // wait for /readyz (else only /healthz)
  std::string data_dir{};    // empty: a fresh one in the test's temp dir
  // Round robin by default, so every test that pushes several jobs also crosses shards.
  int shard_run = 1;
  // Set when extra_yaml has a tls section: the daemon is then reached over HTTPS, its
  // certificate verified against this CA (tests/support/tls.hpp).
  std::string tls_ca_file{};
  std::uint16_t port = 0;    // 0: a free one; else this one (a master started again in its place)
  std::string redis_yaml{};  // more keys of the redis section ("  replicas_ack: 1\n")
  std::vector<std::string> env{};  // added to its environment ("NAME=value")
};

// The environment that runs a jqmaster with its wall clock `seconds` off the machine's, its
// monotonic clock as it is (tests/clock_shift). Its children inherit it: give such a master an
// external Redis.
std::vector<std::string> clock_offset_env(long seconds);

class Daemon {
 public:
  explicit Daemon(DaemonOptions options);
  ~Daemon();

  std::uint16_t port() const { return port_; }
  HttpClient http() const { return HttpClient(port_, ca_file_); }
  const std::string& data_dir() const { return data_dir_; }
  pid_t pid() const { return process_.pid(); }
  std::string log() const;
  // Whether its log holds `text` within `timeout` (it is read again until it does).
  bool logged(std::string_view text, std::chrono::milliseconds timeout) const;

  bool ready() const;  // /readyz says 200
  // Sends `signo` and waits for the exit code (nullopt: still running after the timeout).
  std::optional<int> stop(int signo, std::chrono::milliseconds timeout);
  std::optional<int> wait_exit(std::chrono::milliseconds timeout) { return process_.wait(timeout); }

 private:
  // Starts the master on port_ and waits until it answers; false when it stopped or did not.
  bool start(const DaemonOptions& options);

  TempDir dir_;
  std::uint16_t port_;
  std::string data_dir_;
  std::string ca_file_;
  ChildProcess process_;
};

// Starts the binary with `args` and returns its exit code and output (for start-up failures).
struct RunResult {
  int exit_code = -1;
  std::string output;
};
RunResult run_master(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                     std::chrono::milliseconds timeout = std::chrono::seconds(20));

std::string master_binary();
std::string ctl_binary();

// Any program run to completion, with its stdout and stderr kept apart.
struct ProgramResult {
  int exit_code = -1;  // -1: still running at the timeout (it is then killed)
  std::string out;
  std::string err;
};
// Runs `argv` (argv[0] searched in PATH) with the `env` entries ("NAME=value") added to the
// test's environment and `stdin_text` on its standard input.
ProgramResult run_program(const std::vector<std::string>& argv,
                          const std::vector<std::string>& env = {},
                          const std::string& stdin_text = "",
                          std::chrono::milliseconds timeout = std::chrono::seconds(20));

}  // namespace jq::test
