// Child processes for tests (redis-server, jqmaster, workers): started with fork/exec, stopped
// by PID, never left behind (the destructor kills what is still running).
#pragma once

#include <sys/types.h>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jq::test {

class ChildProcess {
 public:
  ChildProcess() = default;
  // Starts argv[0] (searched in PATH); stdout and stderr go to `log_file`. `env` entries
  // ("NAME=value") are added to the test's environment.
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_file,
               const std::vector<std::string>& env = {});
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  bool running();
  void signal(int signo);
  // The exit code (128 + signal when killed), or nullopt if it is still running at the timeout.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  void kill_and_wait();

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

// A TCP port on 127.0.0.1 that nothing listens on right now.
std::uint16_t free_port();

// A blocking TCP connection to 127.0.0.1:port (a file descriptor), or -1.
int connect_loopback(std::uint16_t port);
// Writes all of `bytes`; false when the connection broke.
bool send_all(int fd, std::string_view bytes);

// Polls `condition` every `interval` until it holds or `timeout` passes.
template <class Predicate>
bool wait_until(Predicate condition, std::chrono::milliseconds timeout,
                std::chrono::milliseconds interval = std::chrono::milliseconds(5));

// A fresh directory under /tmp, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path);

}  // namespace jq::test

#include <thread>

template <class Predicate>
bool jq::test::wait_until(Predicate condition, std::chrono::milliseconds timeout,
                          std::chrono::milliseconds interval) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(interval);
  }
  return true;
}
