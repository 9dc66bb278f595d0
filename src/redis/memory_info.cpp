#include "src/redis/memory_info.hpp"

#include <charconv>

namespace jq::redis {
namespace {

std::optional<std::int64_t> number(std::string_view text) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<MemoryInfo> parse_memory_info(std::string_view info) {
  MemoryInfo out;
  bool have_used = false;
  bool have_max = false;
  while (!info.empty()) {
    const auto eol = info.find('\n');
    std::string_view line = info.substr(0, eol);
    info = eol == std::string_view::npos ? std::string_view() : info.substr(eol + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // "# Memory", blank lines
    const std::string_view key = line.substr(0, colon);
    const std::string_view value = line.substr(colon + 1);
    if (key == "maxmemory_policy") {
      out.policy = std::string(value);
      continue;
    }
    std::int64_t* field = key == "used_memory"                 ? &out.used
                          : key == "maxmemory"                 ? &out.max
                          : key == "mem_not_counted_for_evict" ? &out.not_counted
                                                               : nullptr;
    if (field == nullptr) continue;
    auto n = number(value);
    if (!n) return std::nullopt;
    *field = *n;
    have_used = have_used || field == &out.used;
    have_max = have_max || field == &out.max;
  }
  if (!have_used || !have_max) return std::nullopt;
  return out;
}

}  // namespace jq::redis
