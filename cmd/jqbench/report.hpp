// A scenario's outcome: named figures in the order they are shown, printed as a readable table
// and as one JSON line ({"scenario": ..., "jobs_per_s": ...}) that scripts pick up.
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "cmd/jqbench/measure.hpp"

namespace jq::bench {

struct Outcome {
  nlohmann::ordered_json fields;  // "scenario" first; units in the names (_ms, _s, _per_s)
  std::string error;              // empty: the run succeeded
};

Outcome failed(std::string scenario, std::string error);

// `v` rounded for people and for the JSON line alike: whole numbers from 100 up, else 3 (from 1
// up) or 6 decimals.
double figure(double v);

// cpu_s, cpu_us_per_job, cpu_s_by_process and cpu_sys_s_by_process (the part of each spent in
// the kernel), each name prefixed by `prefix`.
void add_cpu(Outcome& outcome, const CpuMeter& meter, std::int64_t jobs,
             const std::string& prefix = "");
// <prefix>redis_by_command: {command: [calls per job, µs per job]} between two INFO commandstats
// of the master's Redis, for the commands that ran at least once per 100 jobs (commands run
// inside scripts count under their own names as well as in fcall's µs). Nothing when `after`
// is empty (no --redis-url).
void add_redis_per_job(Outcome& outcome, const std::string& prefix, const RedisCommandStats& before,
                       const RedisCommandStats& after, std::int64_t jobs);
// <prefix>_p50_ms ... <prefix>_max_ms.
void add_percentiles(Outcome& outcome, const std::string& prefix, const Percentiles& p);

void print_table(const Outcome& outcome, std::ostream& out);
void print_json_line(const Outcome& outcome, std::ostream& out);

}  // namespace jq::bench
