#include "src/store/job_routing.hpp"

#include <cstdint>
#include <string_view>

namespace jq::store {
namespace {

std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

std::optional<int> routed_shard(const api::NewJob& job, int shards) {
  const std::string_view key = !job.ordering_key.empty() ? job.ordering_key : job.unique_key;
  if (key.empty() || shards <= 0) return std::nullopt;
  return hashed_shard(key, shards);
}

int hashed_shard(std::string_view key, int shards) {
  return static_cast<int>(fnv1a(key) % static_cast<std::uint64_t>(shards));
}

}  // namespace jq::store
