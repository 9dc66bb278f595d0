// The scripts the engine calls, by id; one Lua file per state transition (see lua/).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace jq::redis {

enum class ScriptId { init_store, push_jobs, get_job, cancel_job, fetch_result };

struct Script {
  ScriptId id;
  std::string_view file;    // "pushJobs-4"
  std::string_view source;  // what EVAL / SCRIPT LOAD send
  std::string sha1;         // what EVALSHA sends
  std::size_t num_keys;     // the number after '-' in the file name
};

// Every script, checked once: a script missing from lua/ or a file name without its key count
// throws std::logic_error (a build mistake, caught at start-up).
std::span<const Script> all_scripts();
const Script& script(ScriptId id);

}  // namespace jq::redis
