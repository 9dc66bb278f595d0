// One field's value (its exact MessagePack bytes) read as the type the contract asks for.
// Errors are invalid_job, name the field, and show the value that was sent:
// "priority must be an integer between -2147483648 and 2147483647, got 3.5".
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/error.hpp"
#include "common/expected.hpp"

namespace jq::api {

// The value as short JSON-like text for messages: 3.5, "abc", [1,2], NaN, binary data (3
// bytes); cut at about 60 bytes.
std::string describe_value(std::string_view msgpack_value);

// invalid_job with `field` set.
ApiError field_error(std::string_view field, std::string message);

Expected<std::int64_t, ApiError> read_int_field(std::string_view field, std::string_view value,
                                                std::int64_t lo, std::int64_t hi);
Expected<bool, ApiError> read_bool_field(std::string_view field, std::string_view value);
Expected<std::string_view, ApiError> read_string_field(std::string_view field,
                                                       std::string_view value);

// Seconds (> 0) as milliseconds rounded up (0.0001 -> 1 ms), the one conversion of every
// duration the contract gives in seconds (the config file's included). The value is first
// rounded to the microsecond so that binary floating point cannot turn 1.1 s into 1101 ms.
std::chrono::milliseconds milliseconds_from_seconds(double seconds);

// A duration in seconds (integer or float), > 0 and <= max_seconds, as milliseconds_from_seconds.
Expected<std::chrono::milliseconds, ApiError> read_seconds_field(std::string_view field,
                                                                 std::string_view value,
                                                                 double max_seconds);

// A duration in seconds (integer or float) that may be 0, 0 <= value <= max_seconds: 0 is 0 ms,
// anything more as milliseconds_from_seconds (0.0001 -> 1 ms).
Expected<std::chrono::milliseconds, ApiError> read_seconds_or_zero_field(std::string_view field,
                                                                         std::string_view value,
                                                                         double max_seconds);

}  // namespace jq::api
