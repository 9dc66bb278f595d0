#include "src/util/shared_clock.hpp"

namespace jq {

bool SharedClock::observe(TimePoint sent, std::int64_t redis_us, TimePoint received) {
  const std::int64_t sent_us = epoch_us(sent);
  const std::int64_t received_us = epoch_us(received);
  if (received_us < sent_us || received_us - sent_us > epoch_us(TimePoint(kMaxRoundTrip))) {
    return false;  // too vague (or this machine's clock was stepped meanwhile)
  }
  // Redis's clock read at some instant between the two: the offset lies between these.
  const std::int64_t least = redis_us - received_us;
  const std::int64_t most = redis_us - sent_us;
  const std::int64_t current = offset_us_.load(std::memory_order_relaxed);
  if (synced() && current >= least && current <= most) return false;
  offset_us_.store(least + (most - least) / 2, std::memory_order_relaxed);
  synced_.store(true, std::memory_order_release);
  return true;
}

}  // namespace jq
