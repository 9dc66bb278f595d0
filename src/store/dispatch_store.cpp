#include "src/store/dispatch_store.hpp"

#include <map>

#include "api/job_result.hpp"
#include "src/redis/bindings/fail_job.hpp"
#include "src/redis/bindings/promote_jobs.hpp"
#include "src/redis/bindings/read_heads.hpp"
#include "src/redis/bindings/reap_jobs.hpp"
#include "src/redis/bindings/release_job.hpp"
#include "src/redis/bindings/reserve_jobs.hpp"
#include "src/redis/errc.hpp"
#include "src/util/time.hpp"

namespace jq::store {
namespace {

using redis::ScriptCall;
using redis::bindings::FailJob;
using redis::bindings::PromoteJobs;
using redis::bindings::ReadHeads;
using redis::bindings::ReapJobs;
using redis::bindings::ReleaseJob;
using redis::bindings::ReserveJobs;
using redis::bindings::RetryArgs;

constexpr std::string_view kReapMessage =
    "no answer before the deadline; the master that sent it may have stopped";

std::optional<QueueHead> head_of(const QueueRef& queue, std::optional<ReserveJobs::Head> head) {
  if (!head) return std::nullopt;
  return QueueHead{queue.shard, queue.name, head->priority, std::move(head->member)};
}

RetryArgs retry_args(const RetryPolicy& retry) {
  return {retry.base.count(), retry.max.count(), retry.jitter, retry.result_ttl.count()};
}

}  // namespace

bool QueueHead::before(const QueueHead& other) const {
  if (priority != other.priority) return priority < other.priority;
  return member < other.member;
}

DispatchStore::DispatchStore(redis::Client& redis, redis::Keys keys, int shards, Clock clock,
                             RetryPolicy retry, std::optional<ConstraintSteps> steps)
    : redis_(redis),
      keys_(std::move(keys)),
      shards_(shards),
      clock_(std::move(clock)),
      retry_(retry),
      steps_(steps),
      admission_(redis_, keys_),
      handoff_(redis_, keys_, shards, clock_, [this] { return joined(); }),
      leases_(redis_, keys_, handoff_, clock_) {
  for (int s = 0; s < shards; ++s) {
    completions_.push_back(std::make_unique<CompletionBatcher>(
        redis_, keys_, s, static_cast<std::int64_t>(retry_.result_ttl.count()), clock_,
        [this] { return joined(); }));
  }
}

DispatchStore::~DispatchStore() = default;

bool DispatchStore::joined() const {
  if (steps_) return *steps_ == ConstraintSteps::joined;
  return redis_.scripts_span_tags();
}

std::int64_t DispatchStore::now_ms() const {
  return epoch_ms(clock_());
}

ScriptCall DispatchStore::reserve_call(const QueueRef& queue, std::int64_t now, int max,
                                       const std::optional<QueueHead>& bound, bool admit,
                                       std::string token) const {
  return ReserveJobs::call(
      ReserveJobs::keys(keys_, queue.shard, queue.name, admit),
      {now, max, bound ? std::optional(bound->priority) : std::nullopt,
       bound ? bound->member : std::string(), queue.name, queue.shard, std::move(token)});
}

// readHeads, one call per shard for all its queues, pipelined: each head as a reservation with
// max 0 answers it, cancelled jobs' members dropped on the way.
asio::awaitable<std::vector<DispatchStore::HeadRead>> DispatchStore::heads(
    std::vector<QueueRef> queues) {
  if (queues.empty()) co_return std::vector<HeadRead>{};
  struct ShardRead {
    ReadHeads::Args args;
    std::vector<std::size_t> asked;  // the positions in `queues` of its names
  };
  std::map<int, ShardRead> by_shard;
  for (std::size_t i = 0; i < queues.size(); ++i) {
    ShardRead& read = by_shard[queues[i].shard];
    read.args.names.push_back(queues[i].name);
    read.asked.push_back(i);
  }
  std::vector<ScriptCall> calls;
  calls.reserve(by_shard.size());
  for (auto& [shard, read] : by_shard) {
    calls.push_back(ReadHeads::call(ReadHeads::keys(keys_, shard), std::move(read.args)));
  }
  std::vector<redis::ReplyResult> replies = co_await redis_.eval_each(std::move(calls));
  std::vector<HeadRead> out(queues.size());
  std::size_t c = 0;  // the replies come in the calls' order: the map's
  for (const auto& [shard, read] : by_shard) {
    redis::ReplyResult& reply = replies[c++];
    std::optional<StoreError> failed;
    std::vector<std::optional<ReadHeads::Head>> heads;
    if (!reply) {
      failed = StoreError::unavailable(reply.error());
    } else if (auto decoded = ReadHeads::decode(std::move(*reply), read.asked.size())) {
      heads = std::move(*decoded);
    } else {
      failed = StoreError::bad_reply(decoded.error());
    }
    for (std::size_t j = 0; j < read.asked.size(); ++j) {
      const std::size_t i = read.asked[j];
      if (failed) {
        out[i] = unexpected(*failed);
      } else {
        out[i] = head_of(queues[i], std::move(heads[j]));
      }
    }
  }
  co_return out;
}

asio::awaitable<Expected<Reservation, StoreError>> DispatchStore::reserve(
    QueueRef queue, int max, std::optional<QueueHead> bound) {
  const std::int64_t now = now_ms();
  const bool admit = joined();
  std::string token = lost_.next_token();
  ScriptCall call = reserve_call(queue, now, max, bound, admit, token);
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) {
    if (redis::may_have_run(reply.error())) lost_.lost(queue.shard, token, now);
    co_return unexpected(StoreError::unavailable(reply.error()));
  }
  auto reserved = ReserveJobs::decode(std::move(*reply));
  if (!reserved) {
    lost_.lost(queue.shard, token, now);  // it may have run, and taken jobs
    co_return unexpected(StoreError::bad_reply(reserved.error()));
  }
  Reservation out;
  out.head = head_of(queue, std::move(reserved->head));
  out.ready = reserved->ready;
  out.jobs.reserve(reserved->jobs.size());
  bool constrained = false;
  for (ReserveJobs::Taken& taken : reserved->jobs) {
    auto record = decode_boxed_record(taken.record);
    if (!record) {
      lost_.lost(queue.shard, token, now);  // its readable jobs are found and given back
      co_return unexpected(
          StoreError::internal("reserveJobs: unreadable record of " + taken.field));
    }
    constrained = constrained || !record->constraints.empty();
    const std::int64_t deadline = now + record->timeout_ms;
    out.jobs.push_back(
        ReservedJob{JobId{queue.shard, std::move(taken.field)}, std::move(record), deadline});
  }
  if (constrained && !admit) {
    out.jobs = co_await admission_.admit(queue.shard, now, std::move(out.jobs));
  }
  co_return out;
}

asio::awaitable<std::vector<ReservedJob>> DispatchStore::find_lost_reservations(bool every) {
  return lost_.find(redis_, keys_, now_ms(), every);
}

// Separate, the leases go beside the shard's call, not after it: a lease is named by its
// attempt, so even a stale answer's release only frees what that attempt held. Joined,
// completeJobs releases those of the jobs it finishes; a stale answer's go here.
asio::awaitable<Expected<Completed, StoreError>> DispatchStore::complete(
    JobId id, int attempt, std::string result, std::optional<std::int64_t> handed,
    std::vector<std::string> constraints) {
  auto lease = attempt_lease(id, attempt, constraints);
  const bool separate = !joined();
  if (lease && separate) leases_.release({std::move(*lease)});
  auto done = co_await completions_[static_cast<std::size_t>(id.shard)]->complete(
      std::move(id.field), attempt, std::move(result), handed);
  if (lease && !separate && (!done || *done == Completed::stale)) {
    leases_.release({std::move(*lease)});
  }
  co_return done;
}

asio::awaitable<Expected<FailOutcome, StoreError>> DispatchStore::fail(
    JobId id, int attempt, std::string failure, bool should_retry, std::string message,
    std::vector<std::string> constraints) {
  if (auto lease = attempt_lease(id, attempt, constraints)) leases_.release({std::move(*lease)});
  redis::ScriptCall call =
      FailJob::call(FailJob::keys(keys_, id.shard),
                    {id.field, attempt, std::move(failure), should_retry, std::move(message),
                     now_ms(), retry_args(retry_), keys_.events_channel(id.shard), id.shard});
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  auto failed = FailJob::decode(*reply);
  if (!failed) co_return unexpected(StoreError::bad_reply(failed.error()));
  switch (failed->status) {
    case FailJob::Status::scheduled:
      co_return FailOutcome::retry_scheduled;
    case FailJob::Status::dead:
      co_return FailOutcome::dead;
    case FailJob::Status::stale:
      co_return FailOutcome::stale;
  }
  co_return unexpected(StoreError::internal("failJob: unhandled status"));
}

// The leases go first: once the job is ready again another master may admit the same attempt
// number (a given-back attempt is not counted), whose lease has the same name.
asio::awaitable<Expected<bool, StoreError>> DispatchStore::release(const ReservedJob& job,
                                                                   bool unsent) {
  const LeaseRelease released = co_await release_leases(job, unsent);
  if (released != LeaseRelease::released) {
    co_return unexpected(StoreError{StoreErrc::unavailable, "its leases were not released"});
  }
  co_return co_await give_back(job);
}

asio::awaitable<LeaseRelease> DispatchStore::release_leases(const ReservedJob& job, bool unsent) {
  auto lease = attempt_lease(job.id, job.record->attempts, job.record->constraints);
  if (!lease) co_return LeaseRelease::released;
  lease->unsent = unsent;
  co_return co_await leases_.release_now(std::move(*lease));
}

asio::awaitable<Expected<bool, StoreError>> DispatchStore::give_back(const ReservedJob& job) {
  const int shard = job.id.shard;
  redis::ScriptCall call = ReleaseJob::call(
      ReleaseJob::keys(keys_, shard, job.record->name),
      {job.id.field, job.record->attempts, keys_.events_channel(shard), shard, job.token()});
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  auto status = ReleaseJob::decode(*reply);
  if (!status) co_return unexpected(StoreError::bad_reply(status.error()));
  co_return *status == ReleaseJob::Status::released;
}

redis::ScriptCall DispatchStore::promote_call(int shard, int limit) const {
  return PromoteJobs::call(PromoteJobs::keys(keys_, shard),
                           {now_ms(), limit, keys_.events_channel(shard), shard});
}

Expected<PromoteOutcome, StoreError> DispatchStore::promoted(const redis::ReplyResult& reply) {
  if (!reply) return unexpected(StoreError::unavailable(reply.error()));
  auto promoted = PromoteJobs::decode(*reply);
  if (!promoted) return unexpected(StoreError::bad_reply(promoted.error()));
  return PromoteOutcome{static_cast<int>(promoted->promoted), promoted->next_due_ms};
}

asio::awaitable<Expected<PromoteOutcome, StoreError>> DispatchStore::promote(int shard, int limit) {
  redis::ReplyResult reply = co_await redis_.eval(promote_call(shard, limit));
  co_return promoted(reply);
}

asio::awaitable<std::vector<Expected<PromoteOutcome, StoreError>>> DispatchStore::promote_all(
    int limit) {
  std::vector<ScriptCall> calls;
  for (int shard = 0; shard < shards(); ++shard) calls.push_back(promote_call(shard, limit));
  std::vector<redis::ReplyResult> replies = co_await redis_.eval_each(std::move(calls));
  std::vector<Expected<PromoteOutcome, StoreError>> out;
  out.reserve(replies.size());
  for (const redis::ReplyResult& reply : replies) out.push_back(promoted(reply));
  co_return out;
}

asio::awaitable<Expected<std::optional<std::int64_t>, StoreError>>
DispatchStore::wake_due_constraints(int limit) {
  co_return co_await handoff_.wake_due(limit);
}

redis::ScriptCall DispatchStore::reap_call(int shard, std::int64_t cutoff_ms, int limit) const {
  const std::int64_t now = now_ms();
  return ReapJobs::call(
      ReapJobs::keys(keys_, shard),
      {cutoff_ms, now, limit,
       api::encode_failure(api::FailureReason::timeout, true, kReapMessage, iso8601_utc(now)),
       std::string(kReapMessage), retry_args(retry_), keys_.events_channel(shard), shard});
}

// The leases of the attempts it ended are released beside it (on a cluster they live in {c}).
Expected<int, StoreError> DispatchStore::reaped(redis::ReplyResult reply) {
  if (!reply) return unexpected(StoreError::unavailable(reply.error()));
  auto reaped = ReapJobs::decode(std::move(*reply));
  if (!reaped) return unexpected(StoreError::bad_reply(reaped.error()));
  std::vector<AttemptLease> leases;
  leases.reserve(reaped->leases.size());
  for (ReapJobs::Lease& l : reaped->leases) {
    leases.push_back(AttemptLease{std::move(l.lease), std::move(l.constraints)});
  }
  leases_.release(std::move(leases));
  return static_cast<int>(reaped->reaped);
}

asio::awaitable<std::vector<Expected<int, StoreError>>> DispatchStore::reap_all(
    std::int64_t cutoff_ms, int limit) {
  std::vector<ScriptCall> calls;
  for (int shard = 0; shard < shards(); ++shard)
    calls.push_back(reap_call(shard, cutoff_ms, limit));
  std::vector<redis::ReplyResult> replies = co_await redis_.eval_each(std::move(calls));
  std::vector<Expected<int, StoreError>> out;
  out.reserve(replies.size());
  for (redis::ReplyResult& reply : replies) out.push_back(reaped(std::move(reply)));
  co_return out;
}

}  // namespace jq::store
