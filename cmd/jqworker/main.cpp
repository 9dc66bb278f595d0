// jqworker: an example worker for jqmaster, and the worker tests and benchmarks run against.
// flags -> options -> run -> exit code. What a job's argument can ask for is in job_request.hpp.
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <iostream>

#include "cmd/jqworker/worker_server.hpp"

namespace {

constexpr int kExitBadFlags = 2;

struct Flags {
  std::string listen = "127.0.0.1:9000";
  int threads = 1;
  bool log_requests = false;
  std::string journal;
  std::string answer = "msgpack";
  bool no_stats = false;
  std::string master_url;
  std::string own_url;
  std::vector<std::string> names{"*"};
  int concurrency = 8;
  int ttl_s = 0;
  std::string token;
};

void add_flags(CLI::App& cli, Flags& f) {
  cli.add_option("--listen", f.listen, "HOST:PORT to serve on; port 0 picks a free one")
      ->capture_default_str();
  cli.add_option("--threads", f.threads, "io threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cli.add_flag("--log-requests", f.log_requests, "log one line per request");
  cli.add_option("--journal", f.journal,
                 "append a line to FILE when a job attempt starts and when it ends (for tests)");
  cli.add_option("--answer", f.answer,
                 "result objects in msgpack (the argument's bytes copied) or json (the argument "
                 "decoded and encoded as JSON)")
      ->check(CLI::IsMember({"msgpack", "json"}))
      ->capture_default_str();
  cli.add_flag("--no-stats", f.no_stats,
               "keep no per-job record for GET /stats (benchmarks: the worker only decodes and "
               "answers)");
  cli.add_option("--register", f.master_url, "master URL to register with (POST /v1/workers)");
  cli.add_option("--url", f.own_url, "URL the master should call (default http://LISTEN/)");
  cli.add_option("--names", f.names, "job names served, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  cli.add_option("--concurrency", f.concurrency, "jobs at once, as registered")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cli.add_option("--ttl", f.ttl_s, "registration ttl in seconds; re-registers every ttl/3; 0: none")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cli.add_option("--token", f.token, "sent to the master as Authorization: Bearer TOKEN");
}

// Flags into options; the error names the flag.
jq::Expected<jq::worker::WorkerOptions, std::string> to_options(const Flags& f) {
  jq::worker::WorkerOptions o;
  auto listen = jq::worker::parse_listen(f.listen);
  if (!listen) return jq::unexpected(listen.error());
  std::tie(o.host, o.port) = *listen;
  o.threads = f.threads;
  o.log_requests = f.log_requests;
  o.journal_path = f.journal;
  o.answer_format =
      f.answer == "json" ? jq::worker::AnswerFormat::json : jq::worker::AnswerFormat::msgpack;
  o.record_stats = !f.no_stats;
  if (f.master_url.empty()) return o;
  auto master = jq::worker::parse_master_url(f.master_url);
  if (!master) return jq::unexpected("--register: " + master.error());
  o.registration =
      jq::worker::Registration{*master, f.own_url, f.names, f.concurrency, f.ttl_s, f.token};
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"jqworker: a jqmaster worker that echoes job arguments, or misbehaves on request"};
  Flags flags;
  add_flags(cli, flags);
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli.exit(e) == 0 ? 0 : kExitBadFlags;
  }
  auto options = to_options(flags);
  if (!options) {
    std::cerr << options.error() << "\n";
    return kExitBadFlags;
  }
  spdlog::set_default_logger(spdlog::stderr_logger_mt("jqworker"));
  return jq::worker::run(std::move(*options));
}
