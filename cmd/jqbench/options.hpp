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
#include "cmd/jqbench/job_codec.hpp"
#include "common/expected.hpp"

namespace jq::bench {

enum class Scenario {
  push,     // jobs/s acknowledged; no worker
  e2e,      // pushers and the built-in worker together: push -> dispatch -> worker -> completion
  drain,    // a backlog pushed first, then the worker: how fast the master empties it
  latency,  // a fixed offered rate, open loop: percentiles of ack and of push-to-completion
  memory,   // Redis bytes per queued job (INFO memory before and after)
  // constraints: a keyed concurrency limit over many tenants, with the constraint on or off:
  // throughput; dispatch latency of other jobs and the master's idle CPU while a backlog is held
  constraints,
  // steady: a fixed offered rate, open loop, of jobs with keep_result, each result long-polled
  // right after its 201 on a connection of its own: push-to-result-fetched percentiles and the
  // CPU and Redis commands per job
  steady,
};

// How the built-in worker answers (worker_endpoint.hpp).
enum class WorkerMode {
  noop,    // a fixed success, the job not decoded
  decode,  // the job decoded in full, its argument echoed back as the result
};

// The constraints scenario's parts (--parts), run in this order when asked for.
struct ConstraintParts {
  bool throughput = true;  // jobs/s over tenants with the constraint on (or off)
  bool idle = true;        // the processes' CPU while the backlog is held (or none is)
  bool latency = true;     // open-loop pushes of unconstrained jobs while it is held (or not)
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
  int batch = 1;  // jobs per POST /v1/jobs; 1 sends a single job (a map, not an array)
  Format format = Format::msgpack;  // of push bodies, and of the answers asked for
  int connections = 16;             // keep-alive connections pushing at once
  int threads = 1;                  // io threads
  bool keep_result = false;         // e2e: jobs keep their results and every result is fetched
  double rate = 2000;               // latency, steady: pushes per second, sent on schedule
  int arg_bytes = 0;                // each job's argument: a string of this many bytes; 0 = nil
  int priorities = 1;               // priorities drawn from 0..N-1 at random; 1: none sent
  std::int64_t window = 100000;     // e2e: most jobs pushed but not yet done; 0 = no limit
  std::string job_name = "bench";
  int job_names = 1;      // > 1: jobs named <job_name>-<k>, k drawn from 1..job_names
  std::string redis_url;  // memory: where INFO memory is read; else INFO commandstats, when set
  std::vector<WatchedProcess> watched;  // --pids
  int worker_concurrency = 50;          // registered with the master
  std::string worker_host = "127.0.0.1";
  std::uint16_t worker_port = 0;              // 0: any free port
  WorkerMode worker_mode = WorkerMode::noop;  // --worker
  // --external-worker (also --worker-url): a worker in a process of its own (e.g. jqworker) that
  // jqbench registers instead of the built-in one; jobs done are then read from GET /v1/stats
  // (e2e, drain, steady, constraints throughput)
  std::string worker_url;
  std::chrono::seconds completion_timeout{60};  // no completion for this long: the run failed
  bool progress = true;                         // one stderr line a second
  std::string label;                            // copied into the JSON line when set

  // constraints
  bool constraint = true;  // --constraint on|off: the same workload with no constraint created
  int tenants = 1000;      // distinct /tenant values, drawn at random per job
  int tenant_concurrency = 2;
  double unconstrained_share = 0.2;  // of the throughput jobs, named <name>-free: no constraint
  ConstraintParts parts;
  std::int64_t backlog = 100000;             // jobs held behind one running job (0: none)
  std::chrono::duration<double> idle{10.0};  // --idle-seconds: the idle CPU sample
};

Expected<ConstraintParts, std::string> parse_parts(std::string_view text);

}  // namespace jq::bench
