#include "src/redis/embedded_server.hpp"

#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace jq::redis {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string find_executable(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  dirs += ":/usr/sbin:/sbin";  // Debian installs redis-server in /usr/bin, but be lenient
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/" + name;
    if (end > start && access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

bool answers_ping(const std::string& socket_path) {
  timeval timeout{0, 200'000};
  redisContext* ctx = redisConnectUnixWithTimeout(socket_path.c_str(), timeout);
  bool ok = false;
  if (ctx != nullptr && ctx->err == 0) {
    auto* reply = static_cast<redisReply*>(redisCommand(ctx, "PING"));
    ok = reply != nullptr && reply->type == REDIS_REPLY_STATUS;
    if (reply != nullptr) freeReplyObject(reply);
  }
  if (ctx != nullptr) redisFree(ctx);
  return ok;
}

// The last five lines, read from the file's last 4 KiB (Redis's log is never truncated).
std::string tail_of(const fs::path& file) {
  std::ifstream in(file);
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(size > 4096 ? size - 4096 : 0);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  for (std::size_t i = lines.size() > 5 ? lines.size() - 5 : 0; i < lines.size(); ++i) {
    out += "\n  " + lines[i];
  }
  return out;
}

}  // namespace

EmbeddedServer::EmbeddedServer(EmbeddedOptions options) : options_(std::move(options)) {
  const std::string exe = find_executable(options_.server_path);
  if (exe.empty()) {
    throw std::runtime_error(
        "redis-server was not found (redis.server_path: \"" + options_.server_path +
        "\"). Install it (Debian/Ubuntu: apt-get install redis-server), set redis.server_path, "
        "or set redis.url to use a Redis you run yourself");
  }
  std::error_code ec;
  fs::create_directories(options_.data_dir, ec);
  if (ec || !fs::is_directory(options_.data_dir)) {
    throw DataDirError("data_dir " + options_.data_dir + ": " +
                       (ec ? ec.message() : std::string("not a directory")) +
                       "; give a directory the master may create and write in");
  }
  const fs::path dir = fs::absolute(options_.data_dir, ec).lexically_normal();
  if (ec) throw DataDirError("data_dir " + options_.data_dir + ": " + ec.message());
  lock_data_dir(dir);
  // Inherited as "ignore", SIGCHLD would have the kernel reap the child unseen.
  std::signal(SIGCHLD, SIG_DFL);
  try {
    start(exe, dir);
    reaper_ = std::thread([this] { reap(); });
  } catch (...) {
    stop();
    throw;
  }
  spdlog::info("embedded redis-server (pid {}) serving {}", pid_, socket_path_);
}

void EmbeddedServer::LockFd::reset() {
  if (fd >= 0) close(fd);
  fd = -1;
}

// A redis-server of a master that was just killed may still be writing its last data (it holds
// the lock too): a few seconds are given for that before the start is refused.
void EmbeddedServer::lock_data_dir(const fs::path& dir) {
  const std::string lock_file = (dir / "jqmaster.lock").string();
  lock_.fd = open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_.fd < 0) {
    throw DataDirError("data_dir " + dir.string() + ": cannot open " + lock_file + ": " +
                       std::strerror(errno));
  }
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  bool said = false;
  while (flock(lock_.fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK && !said) {
      spdlog::info(
          "data_dir {} is locked ({}): waiting up to 5 s for the master or redis-server "
          "holding it to stop",
          dir.string(), lock_file);
      said = true;
    }
    if (errno != EWOULDBLOCK) {
      // A file system without locks (some NFS and FUSE mounts) served before the lock existed.
      spdlog::warn(
          "data_dir {}: cannot lock {} ({}); make sure no other master uses this "
          "data_dir",
          dir.string(), lock_file, std::strerror(errno));
      return;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      throw DataDirError("data_dir " + dir.string() +
                         " is in use by another jqmaster or its redis-server (they hold " +
                         lock_file +
                         "): give each master its own data_dir, or run one Redis for all of "
                         "them and set redis.url");
    }
    std::this_thread::sleep_for(50ms);
  }
}

void EmbeddedServer::start(const std::string& exe, const fs::path& dir) {
  socket_path_ = (dir / "redis.sock").string();
  log_file_ = (dir / "redis.log").string();
  // Job records share small hashes (src/redis/keys.hpp) that stay compact while each record
  // fits: 256 bytes keeps jobs with arguments of ~200 bytes there, not only the smallest (the
  // default is 64; the ziplist name is the one Redis 6 and 7 both accept).
  std::vector<std::string> args = {
      exe,          "--port",           "0",       "--unixsocket",
      socket_path_, "--unixsocketperm", "700",     "--dir",
      dir.string(), "--appendonly",     "yes",     "--appendfsync",
      "everysec",   "--save",           "",        "--daemonize",
      "no",         "--logfile",        log_file_, "--hash-max-ziplist-value",
      "256"};
  // No maxmemory: the machine's memory is the limit. noeviction is Redis's default, stated
  // because it matters: a full Redis refuses new jobs and never deletes any.
  args.insert(args.end(), {"--maxmemory-policy", "noeviction"});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("cannot start redis-server: fork failed");
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);  // the master died before prctl took effect
    setpgid(0, 0);  // Ctrl-C in the terminal goes to the master, which stops Redis in order
    fcntl(lock_.fd, F_SETFD, 0);  // the lock stays held while this Redis runs
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + options_.start_timeout;
  while (!answers_ping(socket_path_)) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("redis-server exited during start-up; its log " + log_file_ +
                               " ends with:" + tail_of(log_file_));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("redis-server did not answer within " +
                               std::to_string(options_.start_timeout.count()) + " ms; see " +
                               log_file_);
    }
    std::this_thread::sleep_for(20ms);
  }
}

void EmbeddedServer::reap() {
  // WNOWAIT leaves the child a zombie, so its pid is not reused before stop() reaps it.
  siginfo_t info{};
  int waited = 0;
  while ((waited = waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT)) < 0 &&
         errno == EINTR) {
  }
  exited_ = true;
  std::string how;
  if (waited < 0) {
    how = std::string("it can no longer be waited for: ") + std::strerror(errno);
  } else if (info.si_code == CLD_EXITED) {
    how = "exit status " + std::to_string(info.si_status);
  } else {
    how = "killed by signal " + std::to_string(info.si_status);
  }
  const bool clean = waited == 0 && info.si_code == CLD_EXITED && info.si_status == 0;
  // Read before the lock, which the master's stop may be waiting for.
  const std::string tail = tail_of(log_file_);
  std::lock_guard lock(mutex_);
  if (expected_) {
    if (!clean) spdlog::warn("the embedded redis-server exited ({}) during the stop", how);
    return;
  }
  spdlog::log(clean ? spdlog::level::warn : spdlog::level::critical,
              "the embedded redis-server (pid {}) exited ({}) while the master ran; its log {} "
              "ends with:{}\njqmaster stops, as it can store nothing without it: start it again "
              "(the jobs stored are in data_dir's append-only file)",
              pid_, how, log_file_, tail);
  exited_early_ = true;
  if (on_exit_) on_exit_();
}

void EmbeddedServer::on_exit(std::function<void()> handler) {
  std::lock_guard lock(mutex_);
  if (expected_) return;
  on_exit_ = std::move(handler);
  if (exited_early_ && on_exit_) on_exit_();
}

void EmbeddedServer::expect_exit() {
  std::lock_guard lock(mutex_);
  expected_ = true;
  on_exit_ = nullptr;
}

EmbeddedServer::~EmbeddedServer() {
  stop();
}

bool EmbeddedServer::child_gone() {
  if (reaper_.joinable()) return exited_;
  int status = 0;
  return waitpid(pid_, &status, WNOHANG) != 0;  // its pid (reaped) or -1 (not ours any more)
}

void EmbeddedServer::stop() {
  expect_exit();
  if (pid_ > 0) {
    if (!exited_) kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    bool killed = false;
    while (!child_gone()) {
      if (!killed && std::chrono::steady_clock::now() > deadline) {
        spdlog::warn("embedded redis-server did not stop in 10 s; killing it");
        kill(pid_, SIGKILL);
        killed = true;
      }
      std::this_thread::sleep_for(10ms);
    }
    if (reaper_.joinable()) {
      reaper_.join();
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    spdlog::info("embedded redis-server stopped");
    pid_ = -1;
  }
  lock_.reset();
}

}  // namespace jq::redis
