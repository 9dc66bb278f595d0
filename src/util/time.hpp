#pragma once

#include <cstdint>
#include <string>

namespace jq {

// "2026-11-21T01:50:47.123Z" for milliseconds since the Unix epoch.
std::string iso8601_utc(std::int64_t epoch_ms);

}  // namespace jq
