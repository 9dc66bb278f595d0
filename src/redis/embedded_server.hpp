// The default data store: a private redis-server child on a unix socket in data_dir, with the
// append-only file on (appendfsync everysec), as Faktory runs its own. Started before anything
// else and stopped last; the child is told to exit if the master dies (PR_SET_PDEATHSIG), and the
// master stops if the child dies.
#pragma once

#include <sys/types.h>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
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
  // Takes data_dir for this master alone (a lock file, held by the master and its redis-server:
  // a second master there would connect to this one's Redis, and lose it when this one stops),
  // starts the child and waits until it answers PING. Throws DataDirError, or
  // std::runtime_error saying what to do: install redis-server, set redis.server_path, or set
  // redis.url.
  explicit EmbeddedServer(EmbeddedOptions options);
  ~EmbeddedServer();
  EmbeddedServer(const EmbeddedServer&) = delete;
  EmbeddedServer& operator=(const EmbeddedServer&) = delete;

  std::string url() const { return "unix://" + socket_path_; }
  pid_t pid() const { return pid_; }
  // What to do when the child exits before expect_exit(): it is logged with the end of Redis's
  // log, then `handler` is called (from another thread; at once if that already happened).
  // Without its Redis the master can store nothing: it stops, for its supervisor to start it
  // again.
  void on_exit(std::function<void()> handler);
  // The master stops: an exit of the child from now on is expected (a service manager may stop
  // every process of the service at once). The handler is not called after this returns.
  void expect_exit();
  // SIGTERM (Redis writes and syncs its append-only file), then waits; SIGKILL after 10 s.
  void stop();

 private:
  // The lock on data_dir/jqmaster.lock; the child inherits it, so the lock lasts while either
  // runs (a redis-server writing its last append-only data after its master was killed too).
  struct LockFd {
    int fd = -1;
    LockFd() = default;
    LockFd(const LockFd&) = delete;
    LockFd& operator=(const LockFd&) = delete;
    ~LockFd() { reset(); }
    void reset();
  };

  void lock_data_dir(const std::filesystem::path& dir);
  void start(const std::string& exe, const std::filesystem::path& dir);
  void reap();  // the reaper thread: waits for the child's exit
  bool child_gone();

  EmbeddedOptions options_;
  std::string socket_path_;
  std::string log_file_;
  LockFd lock_;
  pid_t pid_ = -1;
  std::thread reaper_;
  std::atomic<bool> exited_{false};
  std::mutex mutex_;  // guards the three below
  bool expected_ = false;
  bool exited_early_ = false;  // the child exited before expect_exit()
  std::function<void()> on_exit_;
};

}  // namespace jq::redis
