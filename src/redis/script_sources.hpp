// The Lua scripts compiled into the binary (generated from lua/ at build time by
// cmake/embed_lua.cmake).
#pragma once

#include <span>
#include <string_view>

namespace jq::redis {

struct ScriptSource {
  std::string_view file;    // "pushJobs-10": the file name without .lua
  std::string_view source;  // the file as it is: its #!lua line, header and body
};

std::span<const ScriptSource> script_sources();

// The Redis function library that holds every script (FUNCTION LOAD): the preamble and every
// helper, then each script as the function <library_name()>_<script> ("pushJobs" of
// pushJobs-10.lua), with its file's flags.
std::string_view library_name();
std::string_view library_source();

// lua/lib/preamble.lua followed by every helper of lua/lib: for tests, which evaluate the
// scripts' own key derivations (record_at, ready_list) rather than keep copies of them.
std::string_view preamble_source();

}  // namespace jq::redis
