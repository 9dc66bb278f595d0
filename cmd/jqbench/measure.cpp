#include "cmd/jqbench/measure.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>

#include <hiredis/hiredis.h>
#include <sys/resource.h>
#include <unistd.h>

namespace jq::bench {
namespace {

constexpr int kUtimeField = 14;  // man 5 proc: fields 14 and 15 of /proc/<pid>/stat, in ticks
constexpr timeval kRedisTimeout{5, 0};

// User and system seconds of `pid` so far; a process that is gone counts as 0.
CpuTimes process_cpu_times(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return {};
  // The command name (field 2) is in parentheses and may hold spaces: count from its end.
  const auto close = line.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  double ticks[2] = {0, 0};  // utime, stime
  for (int n = 3; n <= kUtimeField + 1 && fields >> field; ++n) {
    if (n >= kUtimeField) ticks[n - kUtimeField] = std::stod(field);
  }
  const auto per_second = static_cast<double>(sysconf(_SC_CLK_TCK));
  return CpuTimes{ticks[0] / per_second, ticks[1] / per_second};
}

CpuTimes own_cpu_times() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return CpuTimes{seconds(usage.ru_utime), seconds(usage.ru_stime)};
}

struct RedisAddress {
  std::string host;  // empty: unix socket at `path`
  int port = 6379;
  std::string path;
};

Expected<RedisAddress, std::string> parse_redis_url(std::string_view url) {
  RedisAddress a;
  if (url.starts_with("unix://")) {
    a.path = std::string(url.substr(7));
    if (a.path.empty()) return unexpected(std::string("--redis-url: unix:// needs a path"));
    return a;
  }
  if (!url.starts_with("redis://")) {
    return unexpected(std::string("--redis-url must be redis://host:port[/db] or unix:///path"));
  }
  url.remove_prefix(8);
  const auto slash = url.find('/');
  const std::string_view authority = url.substr(0, slash);  // INFO is server-wide: no db
  const auto colon = authority.rfind(':');
  a.host = std::string(authority.substr(0, colon));
  if (colon != std::string_view::npos) {
    const auto port = authority.substr(colon + 1);
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), a.port);
    if (ec != std::errc() || end != port.data() + port.size()) {
      return unexpected(std::string("--redis-url has a bad port"));
    }
  }
  if (a.host.empty()) return unexpected(std::string("--redis-url has no host"));
  return a;
}

struct ContextDeleter {
  void operator()(redisContext* c) const { redisFree(c); }
};
struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};

using RedisContext = std::unique_ptr<redisContext, ContextDeleter>;

Expected<RedisContext, std::string> redis_connect(const std::string& url) {
  auto address = parse_redis_url(url);
  if (!address) return unexpected(address.error());
  RedisContext context(
      address->host.empty()
          ? redisConnectUnixWithTimeout(address->path.c_str(), kRedisTimeout)
          : redisConnectWithTimeout(address->host.c_str(), address->port, kRedisTimeout));
  if (!context || context->err) {
    return unexpected("cannot connect to Redis at " + url + ": " +
                      (context ? std::string(context->errstr) : std::string("out of memory")));
  }
  return context;
}

}  // namespace

double percentile_ms(const std::vector<Clock::duration>& sorted, double q) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  const auto& d = sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
  return std::chrono::duration<double, std::milli>(d).count();
}

Percentiles percentiles(std::vector<Clock::duration> samples) {
  std::sort(samples.begin(), samples.end());
  Percentiles p;
  p.p50_ms = percentile_ms(samples, 0.50);
  p.p90_ms = percentile_ms(samples, 0.90);
  p.p99_ms = percentile_ms(samples, 0.99);
  p.p999_ms = percentile_ms(samples, 0.999);
  p.max_ms = percentile_ms(samples, 1.0);
  return p;
}

std::vector<CpuTimes> CpuMeter::sample() const {
  std::vector<CpuTimes> out;
  for (const auto& w : watched_) out.push_back(process_cpu_times(w.pid));
  out.push_back(own_cpu_times());
  return out;
}

void CpuMeter::start() {
  at_start_ = sample();
}

void CpuMeter::stop() {
  const auto now = sample();
  shares_.clear();
  for (std::size_t i = 0; i < now.size(); ++i) {
    const std::string label = i < watched_.size() ? watched_[i].label : "jqbench";
    const double system = now[i].system - at_start_[i].system;
    shares_.push_back(Share{label, now[i].user - at_start_[i].user + system, system});
  }
}

double CpuMeter::total_seconds() const {
  double total = 0;
  for (const auto& s : shares_) total += s.seconds;
  return total;
}

Expected<std::int64_t, std::string> redis_used_memory(const std::string& url) {
  auto context = redis_connect(url);
  if (!context) return unexpected(context.error());
  std::unique_ptr<redisReply, ReplyDeleter> reply(
      static_cast<redisReply*>(redisCommand(context->get(), "INFO memory")));
  if (!reply || reply->type != REDIS_REPLY_STRING) {
    return unexpected("INFO memory failed on " + url);
  }
  const std::string_view info(reply->str, reply->len);
  constexpr std::string_view kKey = "used_memory:";
  const auto at = info.find(kKey);
  if (at == std::string_view::npos) return unexpected(std::string("INFO has no used_memory"));
  std::int64_t bytes = 0;
  const char* begin = info.data() + at + kKey.size();
  std::from_chars(begin, info.data() + info.size(), bytes);
  return bytes;
}

Expected<RedisCommandStats, std::string> redis_command_stats(const std::string& url) {
  auto context = redis_connect(url);
  if (!context) return unexpected(context.error());
  std::unique_ptr<redisReply, ReplyDeleter> reply(
      static_cast<redisReply*>(redisCommand(context->get(), "INFO commandstats")));
  if (!reply || reply->type != REDIS_REPLY_STRING) {
    return unexpected("INFO commandstats failed on " + url);
  }
  // cmdstat_<name>:calls=<n>,usec=<n>,usec_per_call=...
  RedisCommandStats out;
  std::istringstream lines(std::string(reply->str, reply->len));
  std::string line;
  constexpr std::string_view kPrefix = "cmdstat_";
  while (std::getline(lines, line)) {
    const std::string_view l(line);
    const auto colon = l.find(':');
    const auto calls = l.find("calls=");
    const auto usec = l.find(",usec=");
    if (!l.starts_with(kPrefix) || colon == std::string_view::npos ||
        calls == std::string_view::npos || usec == std::string_view::npos) {
      continue;
    }
    RedisCommandStat stat;
    std::from_chars(l.data() + calls + 6, l.data() + l.size(), stat.calls);
    std::from_chars(l.data() + usec + 6, l.data() + l.size(), stat.usec);
    out[std::string(l.substr(kPrefix.size(), colon - kPrefix.size()))] = stat;
  }
  return out;
}

RedisCommandStats redis_stats(const std::string& url) {
  if (url.empty()) return {};
  auto stats = redis_command_stats(url);
  return stats ? std::move(*stats) : RedisCommandStats{};
}

}  // namespace jq::bench
