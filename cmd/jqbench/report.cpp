#include "cmd/jqbench/report.hpp"

#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>

namespace jq::bench {
namespace {

constexpr int kNameWidth = 22;

std::string show(const nlohmann::ordered_json& v) {
  if (v.is_number_float()) {
    std::ostringstream s;
    const double d = v.get<double>();
    s << std::fixed << std::setprecision(std::abs(d) >= 100 ? 0 : std::abs(d) >= 1 ? 2 : 4) << d;
    return s.str();
  }
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

}  // namespace

double figure(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale = std::abs(v) >= 100 ? 1 : std::abs(v) >= 1 ? 1000 : 1e6;
  return std::round(v * scale) / scale;
}

Outcome failed(std::string scenario, std::string error) {
  Outcome o;
  o.fields["scenario"] = std::move(scenario);
  o.error = std::move(error);
  return o;
}

void add_cpu(Outcome& outcome, const CpuMeter& meter, std::int64_t jobs,
             const std::string& prefix) {
  const double total = meter.total_seconds();
  outcome.fields[prefix + "cpu_s"] = figure(total);
  outcome.fields[prefix + "cpu_us_per_job"] =
      jobs > 0 ? figure(total * 1e6 / static_cast<double>(jobs)) : 0;
  nlohmann::ordered_json by_process = nlohmann::ordered_json::object();
  nlohmann::ordered_json system_by_process = nlohmann::ordered_json::object();
  for (const auto& share : meter.shares()) {
    by_process[share.label] = figure(share.seconds);
    system_by_process[share.label] = figure(share.system_seconds);
  }
  outcome.fields[prefix + "cpu_s_by_process"] = by_process;
  outcome.fields[prefix + "cpu_sys_s_by_process"] = system_by_process;
}

void add_redis_per_job(Outcome& outcome, const std::string& prefix, const RedisCommandStats& before,
                       const RedisCommandStats& after, std::int64_t jobs) {
  if (after.empty() || jobs <= 0) return;
  nlohmann::ordered_json by_command = nlohmann::ordered_json::object();
  const auto n = static_cast<double>(jobs);
  for (const auto& [command, stat] : after) {
    const auto it = before.find(command);
    const RedisCommandStat start = it == before.end() ? RedisCommandStat{} : it->second;
    const double calls = static_cast<double>(stat.calls - start.calls) / n;
    if (calls < 0.01) continue;
    by_command[command] = {figure(calls), figure(static_cast<double>(stat.usec - start.usec) / n)};
  }
  outcome.fields[prefix + "redis_by_command"] = by_command;
}

void add_percentiles(Outcome& outcome, const std::string& prefix, const Percentiles& p) {
  outcome.fields[prefix + "_p50_ms"] = figure(p.p50_ms);
  outcome.fields[prefix + "_p90_ms"] = figure(p.p90_ms);
  outcome.fields[prefix + "_p99_ms"] = figure(p.p99_ms);
  outcome.fields[prefix + "_p999_ms"] = figure(p.p999_ms);
  outcome.fields[prefix + "_max_ms"] = figure(p.max_ms);
}

void print_table(const Outcome& outcome, std::ostream& out) {
  out << "jqbench " << show(outcome.fields.value("scenario", nlohmann::ordered_json("?"))) << "\n";
  for (const auto& [name, value] : outcome.fields.items()) {
    if (name == "scenario") continue;
    if (value.is_object()) {
      for (const auto& [inner, v] : value.items()) {
        out << "  " << std::left << std::setw(kNameWidth) << (name + "." + inner) << " " << show(v)
            << "\n";
      }
      continue;
    }
    out << "  " << std::left << std::setw(kNameWidth) << name << " " << show(value) << "\n";
  }
}

void print_json_line(const Outcome& outcome, std::ostream& out) {
  out << outcome.fields.dump() << std::endl;
}

}  // namespace jq::bench
