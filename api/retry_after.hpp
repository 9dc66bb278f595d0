// A worker's Retry-After header (RFC 9110 section 10.2.3), the one header of a worker's answer
// the master acts on: delay-seconds ("120") or an HTTP-date ("Wed, 25 Nov 2026 10:30:00 GMT").
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace jq::api {

// How long from `now` the worker asks to be left alone: 0 for a date in the past; nullopt when
// the value is empty or neither form (the master then waits its own short pause). Seconds past
// a year are read as a year: the caller caps the wait far below that anyway.
std::optional<std::chrono::milliseconds> parse_retry_after(
    std::string_view value, std::chrono::system_clock::time_point now);

}  // namespace jq::api
