#include "src/store/job_id.hpp"

#include <cctype>
#include <charconv>

namespace jq::store {

std::optional<JobId> parse_job_id(std::string_view text, int shards) {
  auto dash = text.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash > 4) return std::nullopt;
  std::string_view shard_text = text.substr(0, dash);
  std::string_view field = text.substr(dash + 1);
  if (shard_text.size() > 1 && shard_text.front() == '0') return std::nullopt;
  int shard = 0;
  auto [end, ec] = std::from_chars(shard_text.data(), shard_text.data() + shard_text.size(), shard);
  if (ec != std::errc{} || end != shard_text.data() + shard_text.size()) return std::nullopt;
  if (shard < 0 || shard >= shards || field.size() != kFieldLength) return std::nullopt;
  for (char c : field) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return std::nullopt;
  }
  return JobId{shard, std::string(field)};
}

}  // namespace jq::store
