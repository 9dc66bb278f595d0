// The Lua scripts compiled into the binary (generated from lua/ at build time).
#pragma once

#include <span>
#include <string_view>

namespace jq::redis {

struct ScriptSource {
  std::string_view file;    // "pushJobs-10": the file name without .lua
  std::string_view source;  // preamble + script
};

std::span<const ScriptSource> script_sources();

// lua/lib/preamble.lua followed by every helper of lua/lib: for tests, which evaluate the
// scripts' own key derivations (record_at, ready_list) rather than keep copies of them.
std::string_view preamble_source();

}  // namespace jq::redis
