// What jqbench measures besides counting: latency percentiles, CPU time of the processes that
// do the work (from /proc/<pid>/stat, and getrusage for jqbench itself), and Redis memory.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cmd/jqbench/options.hpp"
#include "common/expected.hpp"

namespace jq::bench {

using Clock = std::chrono::steady_clock;

// Nearest-rank percentile (q in 0..1) of `sorted`, in milliseconds; 0 when empty.
double percentile_ms(const std::vector<Clock::duration>& sorted, double q);

struct Percentiles {
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, p999_ms = 0, max_ms = 0;
};
Percentiles percentiles(std::vector<Clock::duration> samples);

struct CpuTimes {
  double user = 0;
  double system = 0;  // in the kernel on the process's behalf (syscalls, page faults)
};

// CPU seconds (user + system) used by each watched process, and by jqbench, between start()
// and stop().
class CpuMeter {
 public:
  explicit CpuMeter(std::vector<WatchedProcess> watched) : watched_(std::move(watched)) {}

  void start();
  void stop();

  struct Share {
    std::string label;
    double seconds = 0;         // user + system
    double system_seconds = 0;  // of which in the kernel
  };
  const std::vector<Share>& shares() const { return shares_; }  // jqbench last
  double total_seconds() const;

 private:
  std::vector<CpuTimes> sample() const;

  std::vector<WatchedProcess> watched_;
  std::vector<CpuTimes> at_start_;
  std::vector<Share> shares_;
};

// `used_memory` from INFO memory of the Redis at `url` (redis://host:port[/db] or
// unix:///path).
Expected<std::int64_t, std::string> redis_used_memory(const std::string& url);

// INFO commandstats of the Redis at `url`: per command (lower case, "fcall"), its calls and
// the µs Redis spent in them. Commands a script runs count under their own names too, so the
// µs of fcall include those of the commands inside.
struct RedisCommandStat {
  std::int64_t calls = 0;
  std::int64_t usec = 0;
};
using RedisCommandStats = std::map<std::string, RedisCommandStat>;
Expected<RedisCommandStats, std::string> redis_command_stats(const std::string& url);
// The same, empty when `url` is empty or Redis cannot be read (the figures are then left out).
RedisCommandStats redis_stats(const std::string& url);

}  // namespace jq::bench
