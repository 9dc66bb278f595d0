// What one jqbench run does: the scenario and its knobs, as the flags gave them. main.cpp turns
// flags into Options; everything else reads Options only.
#pragma once

#include <sys/types.h>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/http_url.hpp"
#include "common/expected.hpp"

namespace jq::bench {

enum class Scenario {
  push,     // jobs/s acknowledged; no worker
  e2e,      // pushers and the built-in worker together: push -> dispatch -> worker -> completion
  drain,    // a backlog pushed first, then the worker: how fast the master empties it
  latency,  // a fixed offered rate, open loop: percentiles of ack and of push-to-completion
  memory,   // Redis bytes per queued job (INFO memory before and after)
};

std::optional<Scenario> parse_scenario(std::string_view text);

// A process whose CPU time counts towards "CPU per job" (jqbench counts itself as well).
struct WatchedProcess {
  std::string label;  // "redis" in --pids redis=123; the pid itself when no label is given
  pid_t pid = 0;
};

// "a,b,c" where each item is PID or LABEL=PID.
Expected<std::vector<WatchedProcess>, std::string> parse_pids(std::string_view text);

struct Options {
  Scenario scenario = Scenario::push;
  api::HttpUrl master;               // --url; its target is the base path ("/" or "/prefix/")
  std::optional<std::int64_t> jobs;  // --jobs: a fixed number of jobs
  std::chrono::duration<double> duration{5.0};  // --duration, when --jobs is not given
  std::chrono::duration<double> warmup{0.5};    // latency: sent, not counted
  int batch = 1;             // jobs per POST /v1/jobs; 1 sends a single job (a map, not an array)
  int connections = 16;      // keep-alive connections pushing at once
  int threads = 1;           // io threads
  bool keep_result = false;  // e2e: jobs keep their results and every result is fetched
  double rate = 2000;        // latency: pushes per second, sent on schedule
  int arg_bytes = 0;         // each job's argument: a string of this many bytes; 0 = nil
  int priorities = 1;        // priorities drawn from 0..N-1 at random; 1: none sent
  std::int64_t window = 100000;  // e2e: most jobs pushed but not yet done; 0 = no limit
  std::string job_name = "bench";
  std::string redis_url;                // memory: where INFO memory is read
  std::vector<WatchedProcess> watched;  // --pids
  int worker_concurrency = 50;          // registered with the master
  std::string worker_host = "127.0.0.1";
  std::uint16_t worker_port = 0;                // 0: any free port
  std::chrono::seconds completion_timeout{60};  // no completion for this long: the run failed
  bool progress = true;                         // one stderr line a second
  std::string label;                            // copied into the JSON line when set
};

}  // namespace jq::bench
