// The first six slots of a job's record (lua/lib/preamble.lua: R_NAME to R_TIMEOUT_MS) as
// pushJobs-10.lua stores them, packed by the master: the script joins them to the slots only it
// knows (state, attempts, enqueued_at, the ready stamp, ...) instead of packing the job's values
// itself, which was a quarter of its time per plain job (docs/BENCHMARKS.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace jq::redis {

// MessagePack, one value after the other: the name and the argument's MessagePack bytes as
// strings, then priority, max_retry, keep_result (0 or 1) and timeout_ms as integers, each in
// its smallest form (as Lua's cmsgpack packs them).
std::string record_head(std::string_view name, std::string_view argument, std::int32_t priority,
                        std::int64_t max_retry, bool keep_result, std::int64_t timeout_ms);

}  // namespace jq::redis
