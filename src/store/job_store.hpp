// The policy side of jobs: push, read, cancel and hand over results, each one script call.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/container/small_vector.hpp>

#include "api/job.hpp"
#include "common/expected.hpp"
#include "src/redis/bindings/push_jobs.hpp"
#include "src/redis/client.hpp"
#include "src/redis/keys.hpp"
#include "src/store/call_batcher.hpp"
#include "src/store/constraint_set.hpp"
#include "src/store/direct_dispatch.hpp"
#include "src/store/job_id.hpp"
#include "src/store/job_record.hpp"
#include "src/store/lost_reservations.hpp"
#include "src/store/store_error.hpp"
#include "src/util/time.hpp"

namespace jq::store {

namespace asio = boost::asio;
using Clock = SystemClock;

struct ResultFetch {
  enum class Kind { result, pending, none };
  Kind kind = Kind::none;
  std::string result;                 // Kind::result: the result object (MessagePack)
  JobState state = JobState::queued;  // Kind::pending
  int attempts = 0;                   // Kind::pending
  bool keep_result = false;           // Kind::pending: a result will be stored
};

// What a push stored: an id per job in order, and which jobs were duplicates of a unique job
// that holds its claim (their id is that job's; no new job was stored for them), and of those
// which were merged into it (on_duplicate replace or append).
struct Pushed {
  std::vector<std::string> ids;
  std::vector<std::size_t> duplicates;  // 0-based positions, ascending
  std::vector<std::size_t> merged;      // 0-based positions, ascending
};

// A new job as the scripts that store jobs take it (pushJobs, and fireSchedule for the jobs of
// schedules): its `delay` or `run_at` as a due time after `now_ms`, and the constraints it matches
// in `constraints` (null: none loaded).
redis::bindings::PushJobs::Job push_job_args(api::NewJob job, std::int64_t now_ms,
                                             const ConstraintSet* constraints);

class JobStore {
 public:
  // `shard_run`: consecutive push requests stored in one shard before moving to the next.
  JobStore(redis::Client& redis, redis::Keys keys, int shards, Clock clock, int shard_run = 1);

  int shards() const { return shards_; }

  // Where pushes find the constraints to match jobs against (contract: "Constraints"); none set,
  // or none loaded yet: jobs match nothing. Set before the first push.
  void use_constraints(ConstraintCache* constraints) { constraints_ = constraints; }

  // The most bytes a job's argument may reach by on_duplicate append (limits.max_body_bytes:
  // no list grows past what one push could send); the next append then makes a new job.
  void limit_appended_lists(std::size_t max_bytes) { max_list_bytes_ = max_bytes; }

  // Who may claim a free worker slot for a pushed job, which then skips the queue (see
  // direct_dispatch.hpp); none: every job is queued. A push that may have taken jobs but whose
  // answer was lost is remembered in `lost`, where the reservations' are, to be found and given
  // back (LostReservations); none: such jobs wait for the reaper. Set before the first push.
  void use_direct_dispatch(DirectDispatch* direct, LostReservations* lost) {
    direct_ = direct;
    lost_ = lost;
  }

  // redis.replicas_ack: a push is answered only once `replicas` replicas of the Redis that stored
  // it confirm it (WAIT, within `timeout`); fewer is StoreErrc::unavailable, the jobs stored. 0:
  // Redis's answer is enough (the default). Set before the first push.
  // The pushes and their WAITs go through `via`, a client of their own: WAIT holds the
  // connection it is sent on (for the whole timeout when a node has too few replicas, as right
  // after a failover), and must not hold up the dispatch, the results and the heartbeats behind
  // it. It counts the writes of its own connection, which are the pushes it confirms.
  void confirm_pushes(int replicas, std::chrono::milliseconds timeout, redis::Client& via) {
    replicas_ack_ = replicas;
    replicas_ack_timeout_ = timeout;
    confirmed_ = &via;
  }
  // Whether pushes have a connection to go on (with replicas_ack, their own).
  bool connected() const { return redis_.ready() && confirmed_->ready(); }

  // Stores the jobs with one script per shard they go to: all in one shard (all or nothing)
  // unless ordering or unique keys route some elsewhere (routed_shard); then, on one Redis,
  // those scripts run in one transaction (all or nothing too), and on a cluster one after
  // another (a failure between two leaves the first shards' jobs stored). `traceparent` (a valid
  // W3C header, or empty for none) is kept with every job of the batch. Pushes read in the same
  // moment go in one call, and those that arrive while one of their shard is on its way go
  // together in the next (group commit, CallBatcher), each request still all or nothing.
  asio::awaitable<Expected<Pushed, StoreError>> push(std::vector<api::NewJob> jobs,
                                                     std::string traceparent);
  asio::awaitable<Expected<JobRecord, StoreError>> get(JobId id);
  asio::awaitable<Expected<void, StoreError>> cancel(JobId id);
  // The result, handed out once. With `watch` > 0, a pending job that keeps its result is marked
  // watched for that long: its result is then announced ("r <id>") when stored, and only then.
  asio::awaitable<Expected<ResultFetch, StoreError>> fetch_result(
      JobId id, std::chrono::milliseconds watch = std::chrono::milliseconds(0));

  // Run on every Redis (re)connect: creates the store's metadata or checks that its shard count
  // is ours. Returns false (after logging why) when this master must not run against the store.
  asio::awaitable<Expected<bool, std::error_code>> verify_shards(redis::Phase phase);

 private:
  struct ShardGroup {
    int shard = 0;
    std::vector<std::size_t> positions;  // of its jobs in the batch, in push order
  };
  // Inline for a push to one shard, the usual one: one allocation less per push.
  using ShardGroups = boost::container::small_vector<ShardGroup, 1>;
  // One request's jobs for one shard: what a pushJobs call may merge with other requests'.
  struct PushItem {
    std::vector<redis::bindings::PushJobs::Job> jobs;
    std::string traceparent;
    std::string take;  // '' or one byte per job: pushJobs' ARGV take
  };
  class ClaimedSlots;
  using PushResult = Expected<redis::bindings::PushJobs::Pushed, StoreError>;
  using PushBatcher = CallBatcher<PushItem, PushResult>;
  asio::awaitable<std::vector<PushResult>> send_pushes(int shard, std::vector<PushItem> items);
  // The pushJobs call of one shard for the items, and how many jobs each item has.
  struct PushCall {
    redis::ScriptCall call;
    std::vector<std::size_t> sizes;
    std::string taken_by;  // the call's token when it may take jobs, else ''
    // The call's now: the jobs it takes have deadlines from it (a lost call's search looks at
    // no job whose deadline is earlier).
    std::int64_t now_ms = 0;
  };
  PushCall push_call(int shard, std::vector<PushItem> items);
  // Each item's part of a pushJobs reply (`sizes`: its jobs per item).
  static std::vector<PushResult> split_pushed(redis::ReplyResult reply,
                                              const std::vector<std::size_t>& sizes);
  // One request's jobs for several shards of one Redis, all or none (MULTI/EXEC).
  asio::awaitable<std::vector<PushResult>> push_across_shards(const ShardGroups& groups,
                                                              std::vector<PushItem> items);
  static void add_pushed(Pushed& out, const ShardGroup& group,
                         redis::bindings::PushJobs::Pushed pushed);
  // One request's own call, not waiting for the shard's group commit.
  asio::awaitable<PushResult> push_alone(int shard, PushItem item);
  // The pushes' own client (replicas_ack) may be up before the main one has checked the store's
  // layout and shard count (verify_shards, at its every connect): pushes wait for that check.
  bool pushes_may_go() const { return confirmed_ == &redis_ || redis_.ready(); }
  // Whether a push may claim worker slots at all (claim_slots asks only then).
  bool may_claim() const;
  // Claims free worker slots for the jobs of `item` that may skip the queue, and marks them to
  // be taken.
  asio::awaitable<ClaimedSlots> claim_slots(PushItem& item);
  ShardGroups group_by_shard(const std::vector<api::NewJob>& jobs, int spread) const;
  std::int64_t now_ms() const;
  std::int64_t next_ready_stamp_us();

  redis::Client& redis_;
  redis::Keys keys_;
  redis::Client* confirmed_ = &redis_;  // where pushes go: redis_ unless replicas_ack_ > 0
  int replicas_ack_ = 0;
  std::chrono::milliseconds replicas_ack_timeout_{1000};
  int shards_;
  unsigned shard_run_;
  Clock clock_;
  ConstraintCache* constraints_ = nullptr;
  DirectDispatch* direct_ = nullptr;
  LostReservations* lost_ = nullptr;
  std::size_t max_list_bytes_ = 1024 * 1024;
  std::atomic<unsigned> next_shard_{0};
  std::atomic<std::int64_t> last_stamp_us_{0};
  std::vector<std::unique_ptr<PushBatcher>> pushes_;  // one per shard
};

}  // namespace jq::store
