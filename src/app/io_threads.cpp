#include "src/app/io_threads.hpp"

#include <algorithm>

#include "src/redis/address.hpp"

namespace jq::app {

bool redis_is_local(std::string_view redis_url) {
  if (redis_url.empty()) return true;
  auto target = redis::parse_target(redis_url);
  if (!target || target->servers.empty()) return false;
  return std::all_of(target->servers.begin(), target->servers.end(), [](const auto& a) {
    return a.is_unix || a.host == "localhost" || a.host == "::1" || a.host.starts_with("127.");
  });
}

unsigned io_thread_count(int configured, std::string_view redis_url, unsigned cores) {
  if (configured > 0) return static_cast<unsigned>(configured);
  const unsigned redis = redis_is_local(redis_url) ? 1 : 0;
  return cores > redis + 1 ? cores - redis : 1;
}

}  // namespace jq::app
