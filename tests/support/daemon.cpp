#include "tests/support/daemon.hpp"

#include <csignal>
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

Daemon::Daemon(DaemonOptions options)
    : port_(options.port != 0 ? options.port : free_port()),
      data_dir_(options.data_dir.empty() ? dir_.file("data") : options.data_dir),
      ca_file_(options.tls_ca_file) {
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
  process_ = ChildProcess({master_binary(), "--config", config}, dir_.file("jqmaster.log"));
  const HttpClient client = http();
  const bool up = wait_until(
      [&] {
        if (!process_.running()) return false;
        try {
          return client.get(options.wait_ready ? "/readyz" : "/healthz").status == 200;
        } catch (const std::exception&) {
          return false;
        }
      },
      20s);
  if (!up) throw std::runtime_error("jqmaster did not come up; its log:\n" + log());
}

Daemon::~Daemon() {
  process_.signal(SIGTERM);
  if (!process_.wait(15s)) process_.kill_and_wait();
}

std::string Daemon::log() const {
  return read_file(dir_.file("jqmaster.log"));
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
