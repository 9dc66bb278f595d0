#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace jq {

// The wall clock as the stores read it (injected: tests set it).
using SystemClock = std::function<std::chrono::system_clock::time_point()>;

// "2026-11-21T01:50:47.123Z" for milliseconds since the Unix epoch.
std::string iso8601_utc(std::int64_t epoch_ms);
// The same written into `text` (no allocation), valid while it lives.
using Iso8601Text = std::array<char, 24>;
std::string_view iso8601_utc(std::int64_t epoch_ms, Iso8601Text& text);

// Milliseconds / microseconds since the Unix epoch of a system-clock time.
inline std::int64_t epoch_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
inline std::int64_t epoch_us(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

}  // namespace jq
