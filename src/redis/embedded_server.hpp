// The default data store: a private redis-server child on a unix socket in data_dir, with the
// append-only file on (appendfsync everysec), as Faktory runs its own. Started before anything
// else and stopped last; the child is told to exit if the master dies (PR_SET_PDEATHSIG).
#pragma once

#include <sys/types.h>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

namespace jq::redis {

struct EmbeddedOptions {
  std::string server_path = "redis-server";
  std::string data_dir = "./data";
  std::chrono::milliseconds start_timeout{15'000};
};

// data_dir cannot be used: not a directory that can be made, or in use by another master.
class DataDirError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class EmbeddedServer {
 public:
  // Takes data_dir for this master alone (a lock file: a second master there would connect to
  // this one's Redis, and lose it when this one stops), starts the child and waits until it
  // answers PING. Throws DataDirError, or std::runtime_error saying what to do: install
  // redis-server, set redis.server_path, or set redis.url.
  explicit EmbeddedServer(EmbeddedOptions options);
  ~EmbeddedServer();
  EmbeddedServer(const EmbeddedServer&) = delete;
  EmbeddedServer& operator=(const EmbeddedServer&) = delete;

  std::string url() const { return "unix://" + socket_path_; }
  pid_t pid() const { return pid_; }
  // SIGTERM (Redis writes and syncs its append-only file), then waits; SIGKILL after 10 s.
  void stop();
  // Whether the child exited while the master ran (not stopped by stop()). It then logs why and
  // sends the master SIGTERM: without its Redis the master can store nothing, and a master that
  // stops is what a supervisor (or the person at the terminal) sees and starts again.
  bool died() const { return died_; }

 private:
  void start(const std::string& exe, const std::filesystem::path& dir);
  void reap();  // the reaper thread: waits for the child's exit
  bool child_gone();

  EmbeddedOptions options_;
  std::string socket_path_;
  std::string log_file_;
  int lock_fd_ = -1;
  pid_t pid_ = -1;
  std::thread reaper_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> exited_{false};
  std::atomic<bool> died_{false};
};

}  // namespace jq::redis
