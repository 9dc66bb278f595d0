// The scripts the engine calls, by id; one Lua file per state transition (see lua/).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace jq::redis {

struct Reply;

enum class ScriptId {
  init_store,
  push_jobs,
  get_job,
  cancel_job,
  fetch_result,
  reserve_jobs,
  complete_jobs,
  fail_job,
  release_job,
  promote_jobs,
  reap_jobs,
  retry_dead_job,
  delete_dead_job,
  register_worker,
  remove_worker,
  expire_workers,
  acquire_slots,
  release_slots,
  set_slots,
  queue_stats,
  list_dead,
  browse_jobs,
  pause_queue,
  create_constraint,
  update_constraint,
  remove_constraint,
  constraint_state,
  wake_constraints,
  reclassify_jobs,
  constraint_stats,
  beat_master,
  claim_schedule_name,
  save_schedule,
  leave_schedule,
  remove_schedule,
  fire_schedule,
  admit_jobs,
  hold_jobs,
  unhold_jobs,
  release_leases,
  ack_wake,
  read_heads,
  find_reserved,
  update_worker_stats,
};

struct Script {
  ScriptId id;
  std::string_view file;    // "pushJobs-10"
  std::string_view source;  // the file: its #!lua line, header and body (the library has it)
  std::string function;     // what FCALL names: "<library>_pushJobs"
  std::size_t num_keys;     // the number after '-' in the file name
};

// One FCALL: built by the script's binding (src/redis/bindings/), which lays out KEYS and ARGV
// in the order of the script's header.
struct ScriptCall {
  ScriptId id;
  std::vector<std::string> keys;  // script(id).num_keys, or fewer where the last are optional
  std::vector<std::string> args;
};

// Every script, checked once: a script missing from lua/ or a file name without its key count
// throws std::logic_error (a build mistake, caught at start-up).
std::span<const Script> all_scripts();
const Script& script(ScriptId id);

// The script as one EVAL source: its #!lua line, the preamble with every helper, its body. For a
// Redis over maxmemory that lacks the library, which refuses FUNCTION LOAD but runs scripts that
// may run there (allow-oom, no-writes). Built for every script at the first use.
const std::string& eval_source(const Script& s);

// Whether a script call's reply says Redis lacks the library ("ERR Function not found": it
// restarted without persistence, FUNCTION FLUSH, a node that never had it).
bool lost_library(const Reply& reply);
// Whether FUNCTION LOAD's reply says Redis has the library now (loaded, or there already).
bool library_loaded(const Reply& reply);

}  // namespace jq::redis
