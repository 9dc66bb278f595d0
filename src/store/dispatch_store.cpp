#include "src/store/dispatch_store.hpp"

#include "api/job_result.hpp"
#include "src/util/time.hpp"

namespace jq::store {
namespace {

using redis::Reply;
using redis::ScriptCall;
using redis::ScriptId;

constexpr std::string_view kReapMessage =
    "no answer before the deadline; the master that sent it may have stopped";

// The head a reserveJobs reply starts with: {member, priority}, both '' when the queue is empty.
std::optional<QueueHead> head_of(const QueueRef& queue, Reply& reply) {
  auto priority = reply.elements[1].as_integer();
  if (!priority) return std::nullopt;
  return QueueHead{queue.shard, queue.name, *priority, std::move(reply.elements[0].str)};
}

}  // namespace

bool QueueHead::before(const QueueHead& other) const {
  if (priority != other.priority) return priority < other.priority;
  return member < other.member;
}

DispatchStore::DispatchStore(redis::Client& redis, redis::Keys keys, int shards, Clock clock,
                             RetryPolicy retry)
    : redis_(redis),
      keys_(std::move(keys)),
      shards_(shards),
      clock_(std::move(clock)),
      retry_(retry) {
  for (int s = 0; s < shards; ++s) {
    completions_.push_back(std::make_unique<CompletionBatcher>(
        redis_, keys_, s, std::to_string(retry_.result_ttl.count())));
  }
}

DispatchStore::~DispatchStore() = default;

std::int64_t DispatchStore::now_ms() const {
  return epoch_ms(clock_());
}

ScriptCall DispatchStore::reserve_call(const QueueRef& queue, std::int64_t now, int max,
                                       const std::optional<QueueHead>& bound) const {
  return ScriptCall{
      ScriptId::reserve_jobs,
      {keys_.jobs_prefix(queue.shard), keys_.inflight(queue.shard),
       keys_.ready(queue.shard, queue.name), keys_.counts(queue.shard), keys_.stats(queue.shard)},
      {std::to_string(now), std::to_string(max),
       bound ? std::to_string(bound->priority) : std::string(),
       bound ? bound->member : std::string(), queue.name}};
}

// reserveJobs taking nothing (max 0) for every queue, in one round trip: the script answers the
// head as a reservation does, dropping cancelled jobs' members on the way.
asio::awaitable<Expected<std::vector<std::optional<QueueHead>>, StoreError>> DispatchStore::heads(
    std::vector<QueueRef> queues) {
  const std::int64_t now = now_ms();
  std::vector<ScriptCall> calls;
  calls.reserve(queues.size());
  for (const QueueRef& q : queues) calls.push_back(reserve_call(q, now, 0, std::nullopt));
  auto reply = co_await redis_.eval_pipeline(std::move(calls));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  std::vector<std::optional<QueueHead>> out(queues.size());
  for (std::size_t i = 0; i < queues.size() && i < reply->elements.size(); ++i) {
    Reply& r = reply->elements[i];
    if (r.is_array() && r.elements.size() >= 2) out[i] = head_of(queues[i], r);
  }
  co_return out;
}

asio::awaitable<Expected<Reservation, StoreError>> DispatchStore::reserve(
    QueueRef queue, int max, std::optional<QueueHead> bound) {
  const std::int64_t now = now_ms();
  ScriptCall call = reserve_call(queue, now, max, bound);
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  if (!reply->is_array() || reply->elements.size() < 2 || reply->elements.size() % 2 != 0) {
    co_return unexpected(StoreError::bad_reply("reserveJobs", *reply));
  }
  Reservation out;
  out.head = head_of(queue, *reply);
  out.jobs.reserve(reply->elements.size() / 2 - 1);
  for (std::size_t i = 2; i < reply->elements.size(); i += 2) {
    auto record = decode_record(reply->elements[i + 1].str);
    if (!record) co_return unexpected(StoreError::bad_reply("reserveJobs (record)", *reply));
    const std::int64_t deadline = now + record->timeout_ms;
    out.jobs.push_back(ReservedJob{JobId{queue.shard, std::move(reply->elements[i].str)},
                                   std::move(*record), deadline});
  }
  co_return out;
}

asio::awaitable<Expected<bool, StoreError>> DispatchStore::complete(JobId id, int attempt,
                                                                    std::string result) {
  co_return co_await completions_[static_cast<std::size_t>(id.shard)]->complete(
      std::move(id.field), attempt, std::move(result));
}

asio::awaitable<Expected<FailOutcome, StoreError>> DispatchStore::fail(JobId id, int attempt,
                                                                       std::string failure,
                                                                       bool should_retry,
                                                                       std::string message) {
  ScriptCall call{
      ScriptId::fail_job,
      {keys_.jobs_prefix(id.shard), keys_.inflight(id.shard), keys_.scheduled(id.shard),
       keys_.dead(id.shard), keys_.done(id.shard, id.field), keys_.counts(id.shard),
       keys_.stats(id.shard)},
      {id.field, std::to_string(attempt), std::move(failure), should_retry ? "1" : "0",
       std::move(message), std::to_string(now_ms()), std::to_string(retry_.base.count()),
       std::to_string(retry_.max.count()), std::to_string(retry_.jitter),
       std::to_string(retry_.result_ttl.count()), keys_.events_channel(), id.str()}};
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  if (!reply->is_array() || reply->elements.empty())
    co_return unexpected(StoreError::bad_reply("failJob", *reply));
  switch (reply->elements[0].integer) {
    case 1:
      co_return FailOutcome::retry_scheduled;
    case 2:
      co_return FailOutcome::dead;
    default:
      co_return FailOutcome::stale;
  }
}

asio::awaitable<Expected<bool, StoreError>> DispatchStore::release(JobId id, std::string name,
                                                                   int attempt) {
  ScriptCall call{
      ScriptId::release_job,
      {keys_.jobs_prefix(id.shard), keys_.inflight(id.shard), keys_.ready(id.shard, name),
       keys_.counts(id.shard)},
      {id.field, std::to_string(attempt), keys_.events_channel(), std::to_string(id.shard)}};
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  if (!reply->is_integer()) co_return unexpected(StoreError::bad_reply("releaseJob", *reply));
  co_return reply->integer == 1;
}

asio::awaitable<Expected<PromoteOutcome, StoreError>> DispatchStore::promote(int shard, int limit) {
  ScriptCall call{ScriptId::promote_jobs,
                  {keys_.scheduled(shard), keys_.jobs_prefix(shard), keys_.ready_prefix(shard),
                   keys_.counts(shard)},
                  {std::to_string(now_ms()), std::to_string(limit), keys_.events_channel(),
                   std::to_string(shard)}};
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  if (!reply->is_array() || reply->elements.size() != 2) {
    co_return unexpected(StoreError::bad_reply("promoteJobs", *reply));
  }
  PromoteOutcome out;
  out.promoted = static_cast<int>(reply->elements[0].integer);
  if (reply->elements[1].integer >= 0) out.next_due_ms = reply->elements[1].integer;
  co_return out;
}

asio::awaitable<Expected<int, StoreError>> DispatchStore::reap(int shard, std::int64_t cutoff_ms,
                                                               int limit) {
  const std::int64_t now = now_ms();
  ScriptCall call{
      ScriptId::reap_jobs,
      {keys_.jobs_prefix(shard), keys_.inflight(shard), keys_.scheduled(shard), keys_.dead(shard),
       keys_.done_prefix(shard), keys_.counts(shard), keys_.stats(shard)},
      {std::to_string(cutoff_ms), std::to_string(now), std::to_string(limit),
       api::encode_failure(api::FailureReason::timeout, true, kReapMessage, iso8601_utc(now)),
       std::string(kReapMessage), std::to_string(retry_.base.count()),
       std::to_string(retry_.max.count()), std::to_string(retry_.jitter),
       std::to_string(retry_.result_ttl.count()), keys_.events_channel(), std::to_string(shard)}};
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  if (!reply->is_integer()) co_return unexpected(StoreError::bad_reply("reapJobs", *reply));
  co_return static_cast<int>(reply->integer);
}

}  // namespace jq::store
