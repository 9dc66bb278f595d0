// A job's state, numbered as the Lua scripts store it (lua/lib/preamble.lua S_*).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace jq::store {

enum class JobState : std::uint8_t {
  queued = 1,
  scheduled = 2,
  running = 3,
  succeeded = 4,
  dead = 5
};

std::string_view to_string(JobState state);
std::optional<JobState> job_state_from_int(std::int64_t value);

}  // namespace jq::store
