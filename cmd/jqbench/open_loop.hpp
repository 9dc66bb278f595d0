// Open-loop pushes, timed per job: the latency scenario's machinery, shared with the constraints
// scenario (latency of unconstrained jobs while a backlog is held) and the steady scenario
// (results long-polled). Single jobs are pushed at a fixed rate whether or not earlier ones were
// answered (a send that finds no idle connection opens another), so a slow answer cannot hold
// back the load that would expose it. Each job is timed from the moment its push is sent to
//   ack        its 201 being read,
//   to_worker  the built-in worker having read the master's request for it (dispatch latency),
//   done       the built-in worker having written its answer to the socket,
//   result     with fetch_results: its result's body read from GET /v1/jobs/{id}/result?wait=30,
//              sent right after the 201 on a connection of a second pool (also opened on demand).
// The time between a push's slot in the schedule and its send is reported as send_lag.
#pragma once

#include <cstdint>
#include <string>

#include "cmd/jqbench/bench.hpp"
#include "cmd/jqbench/job_codec.hpp"
#include "cmd/jqbench/report.hpp"

namespace jq::bench {

struct OpenLoopPlan {
  JobShape shape;
  double rate = 2000;            // pushes per second
  std::int64_t warmup_jobs = 0;  // sent first, on the same schedule, not counted
  std::int64_t measured_jobs = 0;
  bool fetch_results = false;  // the shape must keep results
};

struct OpenLoopFigures {
  std::int64_t jobs = 0;  // measured
  double rate_sent_per_s = 0;
  int connections_opened = 0;
  int result_connections_opened = 0;  // with fetch_results
  bool worker_timed = false;  // the built-in worker ran the jobs: to_worker and done are known
  bool fetched_results = false;
  Percentiles ack, to_worker, done, result, send_lag;
};

// Pushes the plan's jobs on schedule and waits until every push is answered, every result
// fetched (with fetch_results) and the built-in `worker`, when given, has answered every job;
// `meter` runs from the first measured push until then. A built-in worker must have been started
// and registered, and must not be answering other jobs meanwhile (it counts answers). Without
// one (an external worker), the plan must fetch results: they say when jobs are done.
asio::awaitable<Expected<OpenLoopFigures, std::string>> run_open_loop(Bench& bench,
                                                                      WorkerEndpoint* worker,
                                                                      const OpenLoopPlan& plan,
                                                                      CpuMeter& meter);

// The figures, each name prefixed by `prefix` ("" for the latency scenario).
void add_open_loop(Outcome& out, const OpenLoopFigures& f, const std::string& prefix);

}  // namespace jq::bench
