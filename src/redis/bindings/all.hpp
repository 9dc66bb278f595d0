// Every script binding, and their list (for the test that checks them against the scripts).
#pragma once

#include "src/redis/bindings/ack_wake.hpp"
#include "src/redis/bindings/acquire_slots.hpp"
#include "src/redis/bindings/admit_jobs.hpp"
#include "src/redis/bindings/beat_master.hpp"
#include "src/redis/bindings/browse_jobs.hpp"
#include "src/redis/bindings/cancel_job.hpp"
#include "src/redis/bindings/complete_jobs.hpp"
#include "src/redis/bindings/constraint_state.hpp"
#include "src/redis/bindings/constraint_stats.hpp"
#include "src/redis/bindings/constraint_writes.hpp"
#include "src/redis/bindings/delete_dead_job.hpp"
#include "src/redis/bindings/expire_workers.hpp"
#include "src/redis/bindings/fail_job.hpp"
#include "src/redis/bindings/fetch_result.hpp"
#include "src/redis/bindings/find_reserved.hpp"
#include "src/redis/bindings/fire_schedule.hpp"
#include "src/redis/bindings/get_job.hpp"
#include "src/redis/bindings/hold_jobs.hpp"
#include "src/redis/bindings/init_store.hpp"
#include "src/redis/bindings/list_dead.hpp"
#include "src/redis/bindings/pause_queue.hpp"
#include "src/redis/bindings/promote_jobs.hpp"
#include "src/redis/bindings/push_jobs.hpp"
#include "src/redis/bindings/queue_stats.hpp"
#include "src/redis/bindings/read_heads.hpp"
#include "src/redis/bindings/reap_jobs.hpp"
#include "src/redis/bindings/reclassify_jobs.hpp"
#include "src/redis/bindings/register_worker.hpp"
#include "src/redis/bindings/release_job.hpp"
#include "src/redis/bindings/release_leases.hpp"
#include "src/redis/bindings/release_slots.hpp"
#include "src/redis/bindings/remove_worker.hpp"
#include "src/redis/bindings/reserve_jobs.hpp"
#include "src/redis/bindings/retry_dead_job.hpp"
#include "src/redis/bindings/schedule_writes.hpp"
#include "src/redis/bindings/set_slots.hpp"
#include "src/redis/bindings/unhold_jobs.hpp"
#include "src/redis/bindings/update_worker_stats.hpp"
#include "src/redis/bindings/wake_constraints.hpp"

namespace jq::redis::bindings {

template <class... B>
struct List {};

using All =
    List<InitStore, PushJobs, GetJob, CancelJob, FetchResult, ReserveJobs, CompleteJobs, FailJob,
         ReleaseJob, PromoteJobs, ReapJobs, RetryDeadJob, DeleteDeadJob, RegisterWorker,
         RemoveWorker, ExpireWorkers, AcquireSlots, ReleaseSlots, SetSlots, QueueStats, ListDead,
         BrowseJobs, PauseQueue, CreateConstraint, UpdateConstraint, RemoveConstraint,
         ConstraintState, WakeConstraints, ReclassifyJobs, ConstraintStats, BeatMaster,
         ClaimScheduleName, SaveSchedule, LeaveSchedule, RemoveSchedule, FireSchedule, AdmitJobs,
         HoldJobs, UnholdJobs, ReleaseLeases, AckWake, ReadHeads, FindReserved, UpdateWorkerStats>;

}  // namespace jq::redis::bindings
