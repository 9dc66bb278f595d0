// The scenarios. Each runs against the master in bench.options() and returns its outcome; what
// each one measures, exactly, is in docs/BENCHMARKS.md.
#pragma once

#include "cmd/jqbench/bench.hpp"
#include "cmd/jqbench/job_codec.hpp"
#include "cmd/jqbench/report.hpp"

namespace jq::bench {

asio::awaitable<Outcome> run_push(Bench& bench);         // push.cpp
asio::awaitable<Outcome> run_memory(Bench& bench);       // push.cpp
asio::awaitable<Outcome> run_e2e(Bench& bench);          // e2e.cpp
asio::awaitable<Outcome> run_drain(Bench& bench);        // e2e.cpp
asio::awaitable<Outcome> run_latency(Bench& bench);      // latency.cpp
asio::awaitable<Outcome> run_constraints(Bench& bench);  // constraints.cpp
asio::awaitable<Outcome> run_steady(Bench& bench);       // steady.cpp

// The job every scenario pushes, from the options.
JobShape job_shape(const Options& o);

}  // namespace jq::bench
