// A warning that recurs while a failure lasts (Redis out of memory fails every pass of a loop)
// goes to the log once per period, with how often it recurred meanwhile, not once per pass.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>

namespace jq {

class LogEvery {
 public:
  explicit LogEvery(std::chrono::steady_clock::duration period) : period_(period) {}

  // Any thread. When a line is due (the first time, then once per period): how many calls
  // were held back since the last line; otherwise nullopt.
  std::optional<std::uint64_t> due() {
    std::lock_guard lock(mutex_);
    const auto now = std::chrono::steady_clock::now();
    if (last_ && now - *last_ < period_) {
      ++held_back_;
      return std::nullopt;
    }
    last_ = now;
    const std::uint64_t held = held_back_;
    held_back_ = 0;
    return held;
  }

 private:
  std::chrono::steady_clock::duration period_;
  std::mutex mutex_;
  std::optional<std::chrono::steady_clock::time_point> last_;
  std::uint64_t held_back_ = 0;
};

}  // namespace jq
