// The store's verbs for dispatch: look at queue heads, reserve, and finish attempts (success,
// failure with retry or death, release), plus the periodic promote and reap. One script each in
// the job's shard; for a job that matched constraints, also the steps under {c} that admit it
// and give its leases back, whose freed slots go to held jobs (Handoff). On one Redis the
// reservation admits and the success releases in their own scripts; on a cluster, where {c} is
// in another slot, those steps are calls of their own (Admission, LeaseReleaser).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "src/redis/client.hpp"
#include "src/redis/keys.hpp"
#include "src/store/admission.hpp"
#include "src/store/completion_batcher.hpp"
#include "src/store/handoff.hpp"
#include "src/store/job_id.hpp"
#include "src/store/job_record.hpp"
#include "src/store/job_store.hpp"
#include "src/store/lease_releaser.hpp"
#include "src/store/lost_reservations.hpp"
#include "src/store/reserved_job.hpp"
#include "src/store/store_error.hpp"

namespace jq::store {

// How long past its deadline an attempt may still be recorded by the master that sent it; after
// that any master's reaper treats it as timed out (its master is presumed dead).
inline constexpr std::int64_t kReapGraceMs = 2000;

// The next job of one queue (one name in one shard: the front of its best priority's list).
struct QueueHead {
  int shard = 0;
  std::string name;
  std::int64_t priority = 0;
  std::string member;  // readyStamp(9) + field: orders jobs of equal priority

  // Smaller runs first: priority, then the moment it became ready.
  bool before(const QueueHead& other) const;
};

struct QueueRef {
  int shard;
  std::string name;
};

// What one reservation took, and the queue's head after it (nullopt: the queue is empty).
struct Reservation {
  std::vector<ReservedJob> jobs;
  std::optional<QueueHead> head;
  // Jobs waiting in the queue after it (its lists' lengths, of its 8 best priorities).
  std::int64_t ready = 0;
};

struct RetryPolicy {
  std::chrono::milliseconds base{1000};
  std::chrono::milliseconds max{300'000};
  double jitter = 0.2;
  std::chrono::seconds result_ttl{3600};
};

enum class FailOutcome { stale, retry_scheduled, dead };

// Where a reservation's admission and a success's lease release run: in the shard's
// reserveJobs and completeJobs (one Redis that lets a script span hash tags: one call each
// instead of two), or as admitJobs/holdJobs and releaseLeases calls under {c} (a cluster, or a
// server in cluster mode; on one Redis too when asked, for tests).
enum class ConstraintSteps { joined, separate };

struct PromoteOutcome {
  int promoted = 0;
  std::optional<std::int64_t> next_due_ms;
};

class DispatchStore {
 public:
  // `steps`: unless given, joined where the Redis lets scripts span hash tags
  // (Client::scripts_span_tags), else separate.
  DispatchStore(redis::Client& redis, redis::Keys keys, int shards, Clock clock, RetryPolicy retry,
                std::optional<ConstraintSteps> steps = std::nullopt);
  ~DispatchStore();

  int shards() const { return shards_; }

  // Heads of the given queues in one pipelined round trip (one readHeads per shard), one per
  // queue in the order given (nullopt: the queue is empty), or the error of its shard's read: on
  // a cluster one node down fails only its shards' reads.
  using HeadRead = Expected<std::optional<QueueHead>, StoreError>;
  asio::awaitable<std::vector<HeadRead>> heads(std::vector<QueueRef> queues);
  // Up to `max` jobs of one queue, in order, all strictly before `bound` when given; of the jobs
  // that matched constraints, only those their constraints let start (Admission): the others
  // leave the queue to wait held, so the reservation may hold fewer jobs than it took.
  // A reservation whose answer was lost (an error: it may have run) is remembered, and its jobs
  // are found by find_lost_reservations().
  asio::awaitable<Expected<Reservation, StoreError>> reserve(QueueRef queue, int max,
                                                             std::optional<QueueHead> bound);
  bool reservations_lost() const { return lost_.any() && lost_.due(now_ms()); }
  // The running jobs that reservations whose answer was lost took (LostReservations), for the
  // caller to give back (release, unsent); a search Redis did not answer is made again at the
  // next call. Pushes that took jobs at once remember theirs here too (JobStore). `every`: all
  // of them now, not only those due (a master stopping).
  asio::awaitable<std::vector<ReservedJob>> find_lost_reservations(bool every = false);
  LostReservations& lost_reservations() { return lost_; }
  // The attempt's success (stale when the attempt was already given up on). Batched per shard
  // with other successes (CompletionBatcher). `handed`: see CompletionBatcher::complete.
  // `constraints` (the record's) names the leases the attempt took, released with it (or beside
  // it, LeaseReleaser).
  asio::awaitable<Expected<Completed, StoreError>> complete(JobId id, int attempt,
                                                            std::string result,
                                                            std::optional<std::int64_t> handed,
                                                            std::vector<std::string> constraints);
  asio::awaitable<Expected<FailOutcome, StoreError>> fail(JobId id, int attempt,
                                                          std::string failure, bool should_retry,
                                                          std::string message,
                                                          std::vector<std::string> constraints);
  // The attempt does not count: the job is ready again in its old place (after its leases went).
  // `unsent`: it never went to a worker (a job reserved ahead and handed back, a worker that
  // could not be reached): the rate steps it took are given back too (a rate counts dispatches
  // actually sent); an attempt the worker refused (429/503) keeps them.
  // release_leases(), then give_back().
  asio::awaitable<Expected<bool, StoreError>> release(const ReservedJob& job, bool unsent = false);
  // The attempt's constraint leases alone (released for a job without any). Not released, they
  // expire with the attempt's deadline, and the reaper ends it.
  asio::awaitable<LeaseRelease> release_leases(const ReservedJob& job, bool unsent);
  // The job alone (releaseJob), fenced by its attempt and its reservation's token: true when
  // given back, false when stale. Safe to send again when its answer was lost.
  asio::awaitable<Expected<bool, StoreError>> give_back(const ReservedJob& job);
  asio::awaitable<Expected<PromoteOutcome, StoreError>> promote(int shard, int limit);
  // promote() of every shard in one round trip, one outcome per shard: on a cluster each node's
  // calls go at once, so a node down holds up only its own shards' (the client's retries).
  asio::awaitable<std::vector<Expected<PromoteOutcome, StoreError>>> promote_all(int limit);
  // Lets jobs held back by constraints try again when their pair is due (a rate's next start, a
  // hand-off or release that was lost): the earliest due time left (nullopt: none).
  asio::awaitable<Expected<std::optional<std::int64_t>, StoreError>> wake_due_constraints(
      int limit);
  // In-flight jobs whose deadline is older than `cutoff_ms` fail as timeouts, at most `limit` per
  // shard: how many in each, every shard in one round trip as promote_all().
  asio::awaitable<std::vector<Expected<int, StoreError>>> reap_all(std::int64_t cutoff_ms,
                                                                   int limit);

  std::int64_t now_ms() const;

 private:
  redis::ScriptCall promote_call(int shard, int limit) const;
  static Expected<PromoteOutcome, StoreError> promoted(const redis::ReplyResult& reply);
  redis::ScriptCall reap_call(int shard, std::int64_t cutoff_ms, int limit) const;
  Expected<int, StoreError> reaped(redis::ReplyResult reply);
  redis::ScriptCall reserve_call(const QueueRef& queue, std::int64_t now, int max,
                                 const std::optional<QueueHead>& bound, bool admit,
                                 std::string token) const;
  bool joined() const;

  redis::Client& redis_;
  redis::Keys keys_;
  int shards_;
  Clock clock_;
  RetryPolicy retry_;
  std::optional<ConstraintSteps> steps_;
  Admission admission_;
  Handoff handoff_;
  LeaseReleaser leases_;  // after handoff_: it hands freed slots on through it
  std::vector<std::unique_ptr<CompletionBatcher>> completions_;  // one per shard
  LostReservations lost_;
};

}  // namespace jq::store
