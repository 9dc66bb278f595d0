// The wall clock the masters of one Redis agree on.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>

#include "src/util/time.hpp"

namespace jq {

// Redis's clock as measured at this master's last heartbeat (the Redis holding the masters'
// heartbeats), carried on by this machine's steady clock. Times one master writes another
// compares: an attempt's deadline against the reaper's cutoff (a master reaps every master's
// attempts past their deadline), a retry's due time against the promoter's now, a heartbeat's or
// a registration's expiry, a ready stamp's order. Read from each master's own clock, a master
// whose clock ran 3 s ahead reaped other masters' attempts a second before their deadline and
// the job ran twice; read from here, the machines' clocks may disagree by any amount, and a
// step of this machine's clock (NTP, a VM resumed) changes nothing between two measurements.
class SharedClock {
 public:
  using TimePoint = std::chrono::system_clock::time_point;
  using SteadyPoint = std::chrono::steady_clock::time_point;

  explicit SharedClock(SystemClock wall = std::chrono::system_clock::now,
                       std::function<SteadyPoint()> steady = std::chrono::steady_clock::now)
      : wall_(std::move(wall)), steady_(std::move(steady)) {}

  // Until a measurement, this machine's wall clock.
  TimePoint now() const {
    if (!synced()) return wall_();
    return TimePoint(std::chrono::microseconds(us(steady_()) + offset_us_.load(kRelaxed)));
  }
  SteadyPoint steady_now() const { return steady_(); }
  // This machine's wall clock minus now(): how far it is ahead of Redis's (negative: behind).
  std::chrono::microseconds wall_ahead() const {
    return std::chrono::duration_cast<std::chrono::microseconds>(wall_() - now());
  }
  // Redis's clock minus the steady clock (0 until a measurement).
  std::chrono::microseconds offset() const {
    return std::chrono::microseconds(offset_us_.load(kRelaxed));
  }
  bool synced() const { return synced_.load(std::memory_order_acquire); }

  // One measurement: Redis read its clock, `redis_us` (microseconds since the epoch), after
  // `sent` and before `received` by steady_now(). The first sets the offset to the middle of
  // what it allows; a later one moves it only when it rules the current one out, and then only
  // as far as it must (to the nearer end), so the clock neither jitters with each round trip's
  // length nor jumps by half a slow one. One whose round trip took longer than kMaxRoundTrip is
  // too vague to use. Returns whether the offset changed.
  bool observe(SteadyPoint sent, std::int64_t redis_us, SteadyPoint received);

  static constexpr std::chrono::milliseconds kMaxRoundTrip{500};

 private:
  static constexpr std::memory_order kRelaxed = std::memory_order_relaxed;
  static std::int64_t us(SteadyPoint t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  }

  SystemClock wall_;
  std::function<SteadyPoint()> steady_;
  std::atomic<std::int64_t> offset_us_{0};
  std::atomic<bool> synced_{false};
};

}  // namespace jq
