// The wall clock the masters of one Redis agree on.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "src/util/time.hpp"

namespace jq {

// This machine's clock moved by its offset from the clock of the Redis that holds the masters'
// heartbeats, measured at every beat. Times one master writes another compares: an attempt's
// deadline against the reaper's cutoff (a master reaps every master's attempts past their
// deadline), a retry's due time against the promoter's now, a heartbeat's or a registration's
// expiry, a ready stamp's order. Read from each master's own clock, a master whose clock ran 3 s
// ahead reaped other masters' attempts a second before their deadline and the job ran twice;
// read from here, the masters' clocks may disagree by any amount.
class SharedClock {
 public:
  using TimePoint = std::chrono::system_clock::time_point;

  explicit SharedClock(SystemClock local = std::chrono::system_clock::now)
      : local_(std::move(local)) {}

  TimePoint now() const { return local_() + offset(); }
  // This machine's own clock, for the measurements.
  TimePoint local_now() const { return local_(); }
  std::chrono::microseconds offset() const {
    return std::chrono::microseconds(offset_us_.load(std::memory_order_relaxed));
  }
  // Whether a measurement set the offset (until then, now() is this machine's clock).
  bool synced() const { return synced_.load(std::memory_order_acquire); }

  // One measurement: Redis read its clock, `redis_us` (microseconds since the epoch), after
  // `sent` and before `received` by local_now(). The offset moves only when the measurement
  // rules the current one out (to the middle of what it allows), so the clock does not jitter
  // with each round trip's length; one whose round trip took longer than kMaxRoundTrip is too
  // vague to use. Returns whether the offset changed.
  bool observe(TimePoint sent, std::int64_t redis_us, TimePoint received);

  static constexpr std::chrono::milliseconds kMaxRoundTrip{500};

 private:
  SystemClock local_;
  std::atomic<std::int64_t> offset_us_{0};
  std::atomic<bool> synced_{false};
};

}  // namespace jq
