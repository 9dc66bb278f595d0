#include "tests/support/daemon.hpp"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace jq::test {

using namespace std::chrono_literals;

std::string master_binary() {
  return JQ_MASTER_BINARY;
}
std::string ctl_binary() {
  return JQ_CTL_BINARY;
}

std::vector<std::string> clock_offset_env(long seconds) {
  return {std::string("LD_PRELOAD=") + JQ_CLOCK_SHIFT_LIBRARY,
          "JQ_TEST_CLOCK_SHIFT_S=" + std::to_string(seconds)};
}

Daemon::Daemon(DaemonOptions options)
    : port_(options.port != 0 ? options.port : free_port()),
      data_dir_(options.data_dir.empty() ? dir_.file("data") : options.data_dir),
      ca_file_(options.tls_ca_file) {
  // A free port is only free when it is chosen: another process may bind it first (a parallel
  // test's outgoing connection takes an ephemeral port from the same range). A master that
  // could not listen on a port chosen here starts again on a fresh one, up to three times.
  for (int attempt = 1;; ++attempt) {
    if (start(options)) return;
    const std::string text = log();
    const bool taken = text.find("cannot listen on") != std::string::npos &&
                       text.find("Address already in use") != std::string::npos;
    if (!taken || options.port != 0 || attempt == 3) {
      throw std::runtime_error("jqmaster did not come up; its log:\n" + text);
    }
    std::filesystem::remove(dir_.file("jqmaster.log"));  // tests read the log of the one that runs
    port_ = free_port();
  }
}

bool Daemon::start(const DaemonOptions& options) {
  const std::string config = dir_.file("jqmaster.yaml");
  {
    std::ofstream out(config);
    out << "listen: 127.0.0.1:" << port_ << "\n"
        << "data_dir: " << data_dir_ << "\n"
        << "shards: " << options.shards << "\n"
        << "shard_run: " << options.shard_run << "\n"
        << "redis:\n  url: \"" << options.redis_url << "\"\n"
        << options.redis_yaml << options.extra_yaml << "\n";
  }
  process_ =
      ChildProcess({master_binary(), "--config", config}, dir_.file("jqmaster.log"), options.env);
  const HttpClient client = http();
  const bool up = wait_until(
      [&] {
        if (!process_.running()) return true;  // it stopped: no need to wait longer
        try {
          return client.get(options.wait_ready ? "/readyz" : "/healthz").status == 200;
        } catch (const std::exception&) {
          return false;
        }
      },
      20s);
  return up && process_.running();
}

Daemon::~Daemon() {
  process_.signal(SIGTERM);
  if (!process_.wait(15s)) process_.kill_and_wait();
}

std::string Daemon::log() const {
  return read_file(dir_.file("jqmaster.log"));
}

bool Daemon::logged(std::string_view text, std::chrono::milliseconds timeout) const {
  return wait_until([&] { return log().find(text) != std::string::npos; }, timeout);
}

bool Daemon::ready() const {
  try {
    return http().get("/readyz").status == 200;
  } catch (const std::exception&) {
    return false;
  }
}

std::optional<int> Daemon::stop(int signo, std::chrono::milliseconds timeout) {
  process_.signal(signo);
  return process_.wait(timeout);
}

RunResult run_master(const std::vector<std::string>& args, const std::vector<std::string>& env,
                     std::chrono::milliseconds timeout) {
  TempDir dir;
  std::vector<std::string> argv = {master_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildProcess p(argv, dir.file("out.log"), env);
  RunResult r;
  auto code = p.wait(timeout);
  r.exit_code = code.value_or(-1);
  r.output = read_file(dir.file("out.log"));
  return r;
}

ProgramResult run_program(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                          const std::string& stdin_text, std::chrono::milliseconds timeout) {
  TempDir dir;
  const std::string in = dir.file("in");
  const std::string err = dir.file("err.log");
  std::ofstream(in) << stdin_text;
  // ChildProcess sends stdout and stderr to one file and reads stdin from /dev/null; a shell in
  // front redirects stdin and stderr, then execs the program in its place.
  std::vector<std::string> wrapped = {
      "/bin/sh", "-c", "in=$1 err=$2; shift 2; exec \"$@\" <\"$in\" 2>\"$err\"", "sh", in, err};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  ProgramResult r;
  {
    ChildProcess p(wrapped, dir.file("out.log"), env);
    r.exit_code = p.wait(timeout).value_or(-1);
  }
  r.out = read_file(dir.file("out.log"));
  r.err = read_file(err);
  return r;
}

}  // namespace jq::test
