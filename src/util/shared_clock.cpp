#include "src/util/shared_clock.hpp"

#include <algorithm>

namespace jq {

bool SharedClock::observe(SteadyPoint sent, std::int64_t redis_us, SteadyPoint received) {
  if (received < sent || received - sent > kMaxRoundTrip) return false;
  // Redis's clock read at some instant between the two: the offset lies between these.
  const std::int64_t least = redis_us - us(received);
  const std::int64_t most = redis_us - us(sent);
  const std::int64_t current = offset_us_.load(kRelaxed);
  const std::int64_t next =
      synced() ? std::clamp(current, least, most) : least + (most - least) / 2;
  if (synced() && next == current) return false;
  offset_us_.store(next, kRelaxed);
  synced_.store(true, std::memory_order_release);
  return true;
}

}  // namespace jq
