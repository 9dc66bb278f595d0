// The default data store: a private redis-server child on a unix socket in data_dir, with the
// append-only file on (appendfsync everysec), as Faktory runs its own. Started before anything
// else and stopped last; the child is told to exit if the master dies (PR_SET_PDEATHSIG).
#pragma once

#include <sys/types.h>
#include <chrono>
#include <string>

namespace jq::redis {

struct EmbeddedOptions {
  std::string server_path = "redis-server";
  std::string data_dir = "./data";
  std::chrono::milliseconds start_timeout{15'000};
};

class EmbeddedServer {
 public:
  // Starts the child and waits until it answers PING. Throws std::runtime_error saying what to
  // do: install redis-server, set redis.server_path, or set redis.url.
  explicit EmbeddedServer(EmbeddedOptions options);
  ~EmbeddedServer();
  EmbeddedServer(const EmbeddedServer&) = delete;
  EmbeddedServer& operator=(const EmbeddedServer&) = delete;

  std::string url() const { return "unix://" + socket_path_; }
  pid_t pid() const { return pid_; }
  // SIGTERM (Redis writes and syncs its append-only file), then waits; SIGKILL after 10 s.
  void stop();

 private:
  EmbeddedOptions options_;
  std::string socket_path_;
  pid_t pid_ = -1;
};

}  // namespace jq::redis
