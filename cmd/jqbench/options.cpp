#include "cmd/jqbench/options.hpp"

#include <array>
#include <charconv>
#include <utility>

namespace jq::bench {
namespace {

constexpr std::array<std::pair<Scenario, std::string_view>, 7> kScenarios{{
    {Scenario::push, "push"},
    {Scenario::e2e, "e2e"},
    {Scenario::drain, "drain"},
    {Scenario::latency, "latency"},
    {Scenario::memory, "memory"},
    {Scenario::constraints, "constraints"},
    {Scenario::steady, "steady"},
}};

std::optional<pid_t> parse_pid(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value <= 0) return std::nullopt;
  return static_cast<pid_t>(value);
}

}  // namespace

std::optional<Scenario> parse_scenario(std::string_view text) {
  for (const auto& [scenario, name] : kScenarios) {
    if (name == text) return scenario;
  }
  return std::nullopt;
}

Expected<std::vector<WatchedProcess>, std::string> parse_pids(std::string_view text) {
  std::vector<WatchedProcess> out;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (item.empty()) continue;
    const auto equals = item.find('=');
    const std::string_view number =
        equals == std::string_view::npos ? item : item.substr(equals + 1);
    const auto pid = parse_pid(number);
    if (!pid) {
      return unexpected("--pids: \"" + std::string(item) + "\" is not PID or LABEL=PID");
    }
    const std::string_view label = equals == std::string_view::npos ? item : item.substr(0, equals);
    out.push_back(WatchedProcess{std::string(label), *pid});
  }
  return out;
}

Expected<ConstraintParts, std::string> parse_parts(std::string_view text) {
  ConstraintParts parts{false, false, false};
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (item == "throughput") {
      parts.throughput = true;
    } else if (item == "idle") {
      parts.idle = true;
    } else if (item == "latency") {
      parts.latency = true;
    } else {
      return unexpected("--parts: \"" + std::string(item) +
                        "\" is none of throughput, idle, latency");
    }
  }
  if (!parts.throughput && !parts.idle && !parts.latency) {
    return unexpected(std::string("--parts: name at least one of throughput, idle, latency"));
  }
  return parts;
}

}  // namespace jq::bench
