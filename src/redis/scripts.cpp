#include "src/redis/scripts.hpp"

#include <array>
#include <stdexcept>
#include <vector>

#include "src/redis/reply.hpp"
#include "src/redis/script_sources.hpp"

namespace jq::redis {
namespace {

struct Binding {
  ScriptId id;
  std::string_view file;
};

// Listed in ScriptId order.
constexpr std::array kBindings = {
    Binding{ScriptId::init_store, "initStore-1"},
    Binding{ScriptId::push_jobs, "pushJobs-10"},
    Binding{ScriptId::get_job, "getJob-2"},
    Binding{ScriptId::cancel_job, "cancelJob-8"},
    Binding{ScriptId::fetch_result, "fetchResult-3"},
    Binding{ScriptId::reserve_jobs, "reserveJobs-9"},
    Binding{ScriptId::complete_jobs, "completeJobs-13"},
    Binding{ScriptId::fail_job, "failJob-10"},
    Binding{ScriptId::release_job, "releaseJob-5"},
    Binding{ScriptId::promote_jobs, "promoteJobs-4"},
    Binding{ScriptId::reap_jobs, "reapJobs-10"},
    Binding{ScriptId::retry_dead_job, "retryDeadJob-6"},
    Binding{ScriptId::delete_dead_job, "deleteDeadJob-3"},
    Binding{ScriptId::register_worker, "registerWorker-3"},
    Binding{ScriptId::remove_worker, "removeWorker-4"},
    Binding{ScriptId::expire_workers, "expireWorkers-4"},
    Binding{ScriptId::acquire_slots, "acquireSlots-2"},
    Binding{ScriptId::release_slots, "releaseSlots-1"},
    Binding{ScriptId::set_slots, "setSlots-2"},
    Binding{ScriptId::queue_stats, "queueStats-3"},
    Binding{ScriptId::list_dead, "listDead-2"},
    Binding{ScriptId::browse_jobs, "browseJobs-6"},
    Binding{ScriptId::pause_queue, "pauseQueue-1"},
    Binding{ScriptId::create_constraint, "createConstraint-2"},
    Binding{ScriptId::update_constraint, "updateConstraint-3"},
    Binding{ScriptId::remove_constraint, "removeConstraint-3"},
    Binding{ScriptId::constraint_state, "constraintState-3"},
    Binding{ScriptId::wake_constraints, "wakeConstraints-5"},
    Binding{ScriptId::reclassify_jobs, "reclassifyJobs-3"},
    Binding{ScriptId::constraint_stats, "constraintStats-4"},
    Binding{ScriptId::beat_master, "beatMaster-2"},
    Binding{ScriptId::claim_schedule_name, "claimScheduleName-1"},
    Binding{ScriptId::save_schedule, "saveSchedule-1"},
    Binding{ScriptId::leave_schedule, "leaveSchedule-1"},
    Binding{ScriptId::remove_schedule, "removeSchedule-2"},
    Binding{ScriptId::fire_schedule, "fireSchedule-8"},
    Binding{ScriptId::admit_jobs, "admitJobs-2"},
    Binding{ScriptId::hold_jobs, "holdJobs-6"},
    Binding{ScriptId::unhold_jobs, "unholdJobs-3"},
    Binding{ScriptId::release_leases, "releaseLeases-5"},
    Binding{ScriptId::ack_wake, "ackWake-2"},
    Binding{ScriptId::read_heads, "readHeads-2"},
    Binding{ScriptId::find_reserved, "findReserved-2"},
    Binding{ScriptId::update_worker_stats, "updateWorkerStats-2"},
};

std::size_t key_count(std::string_view file) {
  auto dash = file.rfind('-');
  if (dash == std::string_view::npos) {
    throw std::logic_error("lua/" + std::string(file) + ".lua: name lacks -<number of keys>");
  }
  return std::stoul(std::string(file.substr(dash + 1)));
}

std::vector<Script> build() {
  std::vector<Script> scripts;
  for (const Binding& b : kBindings) {
    const ScriptSource* found = nullptr;
    for (const ScriptSource& s : script_sources()) {
      if (s.file == b.file) found = &s;
    }
    if (found == nullptr) throw std::logic_error("lua/" + std::string(b.file) + ".lua is missing");
    const std::string_view stem = b.file.substr(0, b.file.rfind('-'));
    scripts.push_back(Script{b.id, b.file, found->source,
                             std::string(library_name()) + "_" + std::string(stem),
                             key_count(b.file)});
  }
  return scripts;
}

}  // namespace

std::span<const Script> all_scripts() {
  static const std::vector<Script> scripts = build();
  return scripts;
}

const Script& script(ScriptId id) {
  return all_scripts()[static_cast<std::size_t>(id)];
}

const std::string& eval_source(const Script& s) {
  static const std::vector<std::string> sources = [] {
    std::vector<std::string> out;
    for (const Script& script : all_scripts()) {
      const std::size_t body = script.source.find('\n') + 1;  // after the #!lua line
      out.push_back(std::string(script.source.substr(0, body)) + std::string(preamble_source()) +
                    "\n" + std::string(script.source.substr(body)));
    }
    return out;
  }();
  return sources[static_cast<std::size_t>(s.id)];
}

bool lost_library(const Reply& reply) {
  return reply.is_error() && reply.str.starts_with("ERR Function not found");
}

bool library_loaded(const Reply& reply) {
  return reply.is_string() ||
         (reply.is_error() && reply.str.find("already exists") != std::string::npos);
}

}  // namespace jq::redis
