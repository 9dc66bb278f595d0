#include "src/app/open_files.hpp"

#include <cerrno>
#include <cstring>

#include <sys/resource.h>

#include <spdlog/spdlog.h>

namespace jq::app {
namespace {

// Redis and worker connections, files and the listener beside the clients' connections.
constexpr rlim_t kOwnDescriptors = 256;

}  // namespace

void fit_open_files(std::size_t max_connections) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  if (limit.rlim_cur < limit.rlim_max) {
    const rlim_t before = limit.rlim_cur;
    limit.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
      spdlog::warn("could not raise the open files limit from {}: {}", before,
                   std::strerror(errno));
      limit.rlim_cur = before;
    }
  }
  const auto wanted = static_cast<rlim_t>(max_connections) + kOwnDescriptors;
  if (limit.rlim_cur != RLIM_INFINITY && wanted > limit.rlim_cur) {
    spdlog::warn(
        "limits.max_connections is {} but the open files limit is {}: past about {} client "
        "connections new ones wait in the listen backlog instead of getting 503; raise the "
        "limit (ulimit -n, LimitNOFILE= in a systemd unit) or lower limits.max_connections",
        max_connections, limit.rlim_cur,
        limit.rlim_cur > kOwnDescriptors ? limit.rlim_cur - kOwnDescriptors : 0);
  }
}

}  // namespace jq::app
