// The Lua scripts compiled into the binary (generated from lua/ at build time).
#pragma once

#include <span>
#include <string_view>

namespace jq::redis {

struct ScriptSource {
  std::string_view file;    // "pushJobs-5": the file name without .lua
  std::string_view source;  // preamble + script
};

std::span<const ScriptSource> script_sources();

}  // namespace jq::redis
