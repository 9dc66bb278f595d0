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

StoreError bad_reply(std::string_view script, const Reply& reply) {
  return StoreError::internal(std::string(script) + " answered: " + reply.str);
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

// Two round trips: each queue's best priority, then the front of that priority's list. A
// cancelled job's member may be that front; reserving it drops it and answers the real head.
asio::awaitable<Expected<std::vector<std::optional<QueueHead>>, StoreError>> DispatchStore::heads(
    std::vector<QueueRef> queues) {
  std::vector<std::optional<QueueHead>> out(queues.size());
  if (queues.empty()) co_return out;
  std::vector<std::vector<std::string>> commands;
  commands.reserve(queues.size());
  for (const QueueRef& q : queues) {
    commands.push_back({"ZRANGE", keys_.ready(q.shard, q.name), "0", "0", "WITHSCORES"});
  }
  auto best = co_await redis_.pipeline(std::move(commands));
  if (!best) co_return unexpected(StoreError::unavailable(best.error()));
  std::vector<std::size_t> found;  // queues with a best priority, in `queues`' order
  commands.clear();
  for (std::size_t i = 0; i < queues.size() && i < best->elements.size(); ++i) {
    const Reply& r = best->elements[i];
    if (!r.is_array() || r.elements.size() != 2) continue;
    auto priority = r.elements[1].as_integer();
    if (!priority) continue;
    out[i] = QueueHead{queues[i].shard, queues[i].name, *priority, {}};
    found.push_back(i);
    commands.push_back(
        {"LINDEX",
         keys_.ready_list(queues[i].shard, queues[i].name, static_cast<std::int32_t>(*priority)),
         "0"});
  }
  if (found.empty()) co_return out;
  auto fronts = co_await redis_.pipeline(std::move(commands));
  if (!fronts) co_return unexpected(StoreError::unavailable(fronts.error()));
  for (std::size_t k = 0; k < found.size(); ++k) {
    std::optional<QueueHead>& head = out[found[k]];
    if (k < fronts->elements.size() && fronts->elements[k].is_string()) {
      head->member = std::move(fronts->elements[k].str);
    } else {
      head.reset();  // emptied between the two reads
    }
  }
  co_return out;
}

asio::awaitable<Expected<Reservation, StoreError>> DispatchStore::reserve(
    QueueRef queue, int max, std::optional<QueueHead> bound) {
  const std::int64_t now = now_ms();
  ScriptCall call{
      ScriptId::reserve_jobs,
      {keys_.jobs_prefix(queue.shard), keys_.inflight(queue.shard),
       keys_.ready(queue.shard, queue.name), keys_.counts(queue.shard), keys_.stats(queue.shard)},
      {std::to_string(now), std::to_string(max),
       bound ? std::to_string(bound->priority) : std::string(),
       bound ? bound->member : std::string(), queue.name}};
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  if (!reply->is_array() || reply->elements.size() < 2 || reply->elements.size() % 2 != 0) {
    co_return unexpected(bad_reply("reserveJobs", *reply));
  }
  Reservation out;
  if (auto priority = reply->elements[1].as_integer()) {
    out.head = QueueHead{queue.shard, queue.name, *priority, std::move(reply->elements[0].str)};
  }
  out.jobs.reserve(reply->elements.size() / 2 - 1);
  for (std::size_t i = 2; i < reply->elements.size(); i += 2) {
    auto record = decode_record(reply->elements[i + 1].str);
    if (!record) co_return unexpected(bad_reply("reserveJobs (record)", *reply));
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
    co_return unexpected(bad_reply("failJob", *reply));
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
  if (!reply->is_integer()) co_return unexpected(bad_reply("releaseJob", *reply));
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
    co_return unexpected(bad_reply("promoteJobs", *reply));
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
  if (!reply->is_integer()) co_return unexpected(bad_reply("reapJobs", *reply));
  co_return static_cast<int>(reply->integer);
}

}  // namespace jq::store
