// jqworker's HTTP server: POST (any path) runs a job, GET /stats and POST /stats/reset expose
// what was seen, GET /healthz says ok. Beast and Asio stay inside worker_server.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "cmd/jqworker/behaviour.hpp"
#include "cmd/jqworker/registration.hpp"
#include "common/expected.hpp"

namespace jq::worker {

struct WorkerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 9000;  // 0: any free port (printed on stdout)
  int threads = 1;            // io threads
  bool log_requests = false;  // one log line per request
  std::string journal_path;   // non-empty: append each attempt's start and end (journal.hpp)
  AnswerFormat answer_format = AnswerFormat::msgpack;  // of result objects (successes, failures)
  // false: no per-job record for GET /stats (a benchmark's worker only decodes and answers)
  bool record_stats = true;
  // Register with a master; an empty own_url becomes http://HOST:PORT/ once bound.
  std::optional<Registration> registration;
};

// "HOST:PORT" (IPv6 hosts in brackets) into its parts.
Expected<std::pair<std::string, std::uint16_t>, std::string> parse_listen(std::string_view listen);

// Binds, prints "listening on HOST:PORT" on stdout, serves until SIGINT or SIGTERM.
// Returns the exit code: 0 after a signal, 1 when it cannot listen or open the journal.
int run(WorkerOptions options);

}  // namespace jq::worker
