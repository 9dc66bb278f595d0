#include "src/store/queue_store.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <span>

#include <spdlog/spdlog.h>

#include "src/redis/bindings/delete_dead_job.hpp"
#include "src/redis/bindings/list_dead.hpp"
#include "src/redis/bindings/pause_queue.hpp"
#include "src/redis/bindings/queue_stats.hpp"
#include "src/redis/bindings/retry_dead_job.hpp"
#include "src/redis/memory_info.hpp"
#include "src/store/job_record.hpp"
#include "src/util/time.hpp"

namespace jq::store {
namespace {

using redis::Reply;
using redis::ScriptCall;
using redis::bindings::DeleteDeadJob;
using redis::bindings::ListDead;
using redis::bindings::PauseQueue;
using redis::bindings::QueueStats;
using redis::bindings::RetryDeadJob;
using Command = std::vector<std::string>;

// The fields of a shard's stats hash that stats() reports, in StoreStats order.
constexpr std::array<std::string_view, 5> kCounters = {"pushed", "succeeded", "failed", "retried",
                                                       "dead"};

std::int64_t integer_or_zero(const Reply& reply) {
  return reply.as_integer().value_or(0);
}

// One name's queueStats replies (one per shard) summed: {ready, scheduled, running, dead,
// oldest_stamp_us}.
Expected<QueueInfo, StoreError> combine(std::string name, std::span<const Reply> shards,
                                        bool paused, std::int64_t now_us) {
  QueueInfo info{std::move(name), 0, 0, 0, 0, paused, 0};
  std::int64_t oldest = -1;
  for (const Reply& r : shards) {
    auto stats = QueueStats::decode(r);
    if (!stats) return unexpected(StoreError::bad_reply(stats.error()));
    info.ready += stats->ready;
    info.scheduled += stats->scheduled;
    info.running += stats->running;
    info.dead += stats->dead;
    const std::int64_t stamp = stats->oldest_stamp_us.value_or(-1);
    if (stamp >= 0 && (oldest < 0 || stamp < oldest)) oldest = stamp;
  }
  // Stamps come from the pushing master's clock, which may run a little ahead of ours.
  if (oldest >= 0 && now_us > oldest) info.lag_seconds = static_cast<double>(now_us - oldest) / 1e6;
  return info;
}

// listDead's {field, failed_at_ms, record, ...} of one shard, appended to `out`.
Expected<void, StoreError> add_dead(int shard, const Reply& reply, std::vector<DeadJob>& out) {
  auto dead = ListDead::decode(reply);
  if (!dead) return unexpected(StoreError::bad_reply(dead.error()));
  for (ListDead::Dead& d : *dead) {
    auto record = decode_record(d.record);
    if (!record) return unexpected(StoreError::bad_reply("listDead (record)", reply));
    out.push_back(DeadJob{JobId{shard, std::move(d.field)}, std::move(record->name),
                          record->attempts, d.failed_at_ms, std::move(record->result)});
  }
  return {};
}

bool newer(const DeadJob& a, const DeadJob& b) {
  if (a.failed_at_ms != b.failed_at_ms) return a.failed_at_ms > b.failed_at_ms;
  if (a.id.shard != b.id.shard) return a.id.shard < b.id.shard;
  return a.id.field > b.id.field;
}

}  // namespace

QueueStore::QueueStore(redis::Client& redis, redis::Keys keys, int shards, Clock clock)
    : redis_(redis), keys_(std::move(keys)), shards_(shards), clock_(std::move(clock)) {}

std::int64_t QueueStore::now_us() const {
  return epoch_us(clock_());
}

ScriptCall QueueStore::queue_stats_call(int shard, const std::string& name) const {
  return QueueStats::call(QueueStats::keys(keys_, shard, name), {name});
}

// The scripts, then the `extra` commands, in one round trip (Client::eval_pipeline); the replies
// in the same order. An error reply to any of them is an internal error: none of them fails in a
// correct store.
asio::awaitable<Expected<std::vector<Reply>, StoreError>> QueueStore::eval_all(
    std::vector<ScriptCall> calls, std::vector<Command> extra) {
  const std::size_t expected = calls.size() + extra.size();
  auto reply = co_await redis_.eval_pipeline(std::move(calls), std::move(extra));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  if (!reply->is_array() || reply->elements.size() != expected) {
    co_return unexpected(StoreError::bad_reply("a pipeline", *reply));
  }
  for (const Reply& r : reply->elements) {
    if (r.is_error()) co_return unexpected(StoreError::bad_reply("Redis", r));
  }
  co_return std::move(reply->elements);
}

asio::awaitable<Expected<std::vector<Reply>, StoreError>> QueueStore::run(
    std::vector<Command> commands) {
  std::vector<ScriptCall> no_scripts;
  co_return co_await eval_all(std::move(no_scripts), std::move(commands));
}

// Every job name of every shard and the paused set, in one round trip.
asio::awaitable<Expected<QueueStore::Names, StoreError>> QueueStore::load_names(bool partial) {
  std::vector<Command> commands;
  for (int s = 0; s < shards_; ++s) commands.push_back({"SMEMBERS", keys_.names(s)});
  commands.push_back({"SMEMBERS", keys_.paused()});
  std::vector<redis::ReplyResult> replies = co_await redis_.pipeline_each(std::move(commands));
  std::set<std::string> all;
  Names out;
  for (std::size_t i = 0; i < replies.size(); ++i) {
    const bool paused = i + 1 == replies.size();
    const redis::ReplyResult& r = replies[i];
    if (!r && partial && !paused) continue;
    if (!r) co_return unexpected(StoreError::unavailable(r.error()));
    if (r->is_error()) co_return unexpected(StoreError::bad_reply("Redis", *r));
    for (const Reply& n : r->elements) {
      all.insert(n.str);
      if (paused) out.paused.insert(n.str);
    }
  }
  out.all.assign(all.begin(), all.end());
  co_return out;
}

asio::awaitable<Expected<std::vector<std::string>, StoreError>> QueueStore::names() {
  auto loaded = co_await load_names();
  if (!loaded) co_return unexpected(std::move(loaded.error()));
  co_return std::move(loaded->all);
}

asio::awaitable<Expected<QueueInfo, StoreError>> QueueStore::queue(std::string name) {
  std::vector<ScriptCall> calls;
  std::vector<Command> checks;
  for (int s = 0; s < shards_; ++s) {
    calls.push_back(queue_stats_call(s, name));
    checks.push_back({"SISMEMBER", keys_.names(s), name});
  }
  checks.push_back({"SISMEMBER", keys_.paused(), name});
  auto replies = co_await eval_all(std::move(calls), std::move(checks));
  if (!replies) co_return unexpected(std::move(replies.error()));
  const std::span<const Reply> all(*replies);
  const bool paused = all.back().integer == 1;
  // Known when some shard's names set or the paused set holds it (the replies after the shards').
  const auto seen = all.subspan(static_cast<std::size_t>(shards_));
  if (std::none_of(seen.begin(), seen.end(), [](const Reply& r) { return r.integer == 1; })) {
    co_return unexpected(StoreError{StoreErrc::not_found, "no queue " + name});
  }
  co_return combine(std::move(name), all.first(static_cast<std::size_t>(shards_)), paused,
                    now_us());
}

asio::awaitable<Expected<std::vector<QueueInfo>, StoreError>> QueueStore::list() {
  auto loaded = co_await load_names();
  if (!loaded) co_return unexpected(std::move(loaded.error()));
  co_return co_await gather(std::move(*loaded));
}

asio::awaitable<Expected<std::vector<QueueInfo>, StoreError>> QueueStore::counts(
    std::vector<std::string> names) {
  Names only{std::move(names), {}};  // named: g++ 12 mangles braced lists in co_await
  co_return co_await gather(std::move(only));
}

// queueStats of every name in every shard in one round trip.
asio::awaitable<Expected<std::vector<QueueInfo>, StoreError>> QueueStore::gather(Names names) {
  std::vector<ScriptCall> calls;
  calls.reserve(names.all.size() * static_cast<std::size_t>(shards_));
  for (const std::string& name : names.all) {
    for (int s = 0; s < shards_; ++s) calls.push_back(queue_stats_call(s, name));
  }
  std::vector<Command> no_commands;
  auto replies = co_await eval_all(std::move(calls), std::move(no_commands));
  if (!replies) co_return unexpected(std::move(replies.error()));
  const std::span<const Reply> all(*replies);
  const std::int64_t now = now_us();
  std::vector<QueueInfo> out;
  out.reserve(names.all.size());
  for (std::size_t i = 0; i < names.all.size(); ++i) {
    const bool is_paused = names.paused.contains(names.all[i]);
    auto info = combine(
        std::move(names.all[i]),
        all.subspan(i * static_cast<std::size_t>(shards_), static_cast<std::size_t>(shards_)),
        is_paused, now);
    if (!info) co_return unexpected(std::move(info.error()));
    out.push_back(std::move(*info));
  }
  co_return out;
}

asio::awaitable<Expected<QueueInfo, StoreError>> QueueStore::pause(std::string name) {
  co_return co_await set_paused(std::move(name), true);
}

asio::awaitable<Expected<QueueInfo, StoreError>> QueueStore::resume(std::string name) {
  co_return co_await set_paused(std::move(name), false);
}

// Reads the queue and changes the paused set, telling every master's scheduler (pauseQueue), in
// one round trip. The queue is answered even when its name has no jobs (a name paused before its
// first push, then resumed).
asio::awaitable<Expected<QueueInfo, StoreError>> QueueStore::set_paused(std::string name,
                                                                        bool paused) {
  std::vector<ScriptCall> calls;
  for (int s = 0; s < shards_; ++s) calls.push_back(queue_stats_call(s, name));
  calls.push_back(
      PauseQueue::call(PauseQueue::keys(keys_), {name, paused, keys_.control_channel()}));
  std::vector<Command> no_commands;
  auto replies = co_await eval_all(std::move(calls), std::move(no_commands));
  if (!replies) co_return unexpected(std::move(replies.error()));
  auto changed = PauseQueue::decode(replies->back());
  if (!changed) co_return unexpected(StoreError::bad_reply(changed.error()));
  co_return combine(std::move(name),
                    std::span<const Reply>(*replies).first(static_cast<std::size_t>(shards_)),
                    paused, now_us());
}

asio::awaitable<Expected<std::vector<DeadJob>, StoreError>> QueueStore::dead(std::string name,
                                                                             int limit) {
  std::vector<ScriptCall> calls;
  for (int s = 0; s < shards_; ++s) {
    calls.push_back(ListDead::call(ListDead::keys(keys_, s), {name, limit}));
  }
  std::vector<Command> no_commands;
  auto replies = co_await eval_all(std::move(calls), std::move(no_commands));
  if (!replies) co_return unexpected(std::move(replies.error()));
  std::vector<DeadJob> out;
  for (int s = 0; s < shards_; ++s) {
    auto added = add_dead(s, (*replies)[static_cast<std::size_t>(s)], out);
    if (!added) co_return unexpected(std::move(added.error()));
  }
  std::sort(out.begin(), out.end(), newer);
  if (out.size() > static_cast<std::size_t>(limit)) out.resize(static_cast<std::size_t>(limit));
  co_return out;
}

asio::awaitable<Expected<void, StoreError>> QueueStore::retry_dead(JobId id) {
  redis::ScriptCall call =
      RetryDeadJob::call(RetryDeadJob::keys(keys_, id.shard, id.field),
                         {id.field, now_us(), keys_.events_channel(id.shard), id.shard});
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  auto status = RetryDeadJob::decode(*reply);
  if (!status) co_return unexpected(StoreError::bad_reply(status.error()));
  if (*status == RetryDeadJob::Status::not_found) {
    co_return unexpected(StoreError{StoreErrc::not_found, "no dead job " + id.str()});
  }
  co_return Expected<void, StoreError>{};
}

asio::awaitable<Expected<void, StoreError>> QueueStore::delete_dead(JobId id) {
  redis::ScriptCall call = DeleteDeadJob::call(DeleteDeadJob::keys(keys_, id.shard), {id.field});
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  auto status = DeleteDeadJob::decode(*reply);
  if (!status) co_return unexpected(StoreError::bad_reply(status.error()));
  if (*status == DeleteDeadJob::Status::not_found) {
    co_return unexpected(StoreError{StoreErrc::not_found, "no dead job " + id.str()});
  }
  co_return Expected<void, StoreError>{};
}

// One round trip: per shard the counters, the scheduled and running jobs and the counts hash,
// whose ready:<name> fields add up to the ready jobs.
asio::awaitable<Expected<StoreStats, StoreError>> QueueStore::stats() {
  constexpr std::size_t kPerShard = 4;
  constexpr std::string_view kReady = "ready:";
  std::vector<Command> commands;
  for (int s = 0; s < shards_; ++s) {
    Command hmget = {"HMGET", keys_.stats(s)};
    hmget.insert(hmget.end(), kCounters.begin(), kCounters.end());
    commands.push_back(std::move(hmget));
    commands.push_back({"ZCARD", keys_.scheduled(s)});
    // Below +inf: the zset's keeper (lua/lib/preamble_2_inflight_deadlines.lua) is not a job.
    commands.push_back({"ZCOUNT", keys_.inflight(s), "-inf", "(+inf"});
    commands.push_back({"HGETALL", keys_.counts(s)});
  }
  commands.push_back({"HLEN", keys_.workers()});
  auto replies = co_await run(std::move(commands));
  if (!replies) co_return unexpected(std::move(replies.error()));
  StoreStats out;
  for (int s = 0; s < shards_; ++s) {
    const Reply* r = &(*replies)[static_cast<std::size_t>(s) * kPerShard];
    const auto& counters = r[0].elements;
    std::int64_t* sums[] = {&out.pushed, &out.succeeded, &out.failed, &out.retried, &out.dead};
    for (std::size_t i = 0; i < counters.size() && i < kCounters.size(); ++i) {
      *sums[i] += integer_or_zero(counters[i]);
    }
    out.scheduled += r[1].integer;
    out.running += r[2].integer;
    const auto& counts = r[3].elements;
    for (std::size_t i = 0; i + 1 < counts.size(); i += 2) {
      if (counts[i].str.starts_with(kReady)) out.ready += integer_or_zero(counts[i + 1]);
    }
  }
  out.workers = replies->back().integer;
  co_return out;
}

// PING is refused while Redis loads its data set (INFO is not), INFO memory says whether Redis
// is over its limit and INFO replication whether it became a replica (a PING still answers
// there, every write is refused): all in one round trip, on every master of a cluster (each
// holds some shards: any one down, full or demoted stops some queues).
asio::awaitable<Expected<void, StoreError>> QueueStore::ping() {
  std::vector<Command> commands{{"PING"}, {"INFO", "memory", "replication"}};
  const auto nodes = co_await redis_.on_every_master(std::move(commands));
  for (const auto& node : nodes) {
    const auto& replies = node.replies;
    if (!replies || replies->elements[0].is_error()) {
      const std::string why = replies ? replies->elements[0].str : replies.error().message();
      co_return unexpected(StoreError{
          StoreErrc::unavailable,
          "Redis does not answer (" + node.node + ": " + why + "); the master keeps retrying"});
    }
    // INFO renamed or not allowed: ready as far as can be told.
    const Reply& info = replies->elements[1];
    const auto memory = info.is_string() ? redis::parse_memory_info(info.str) : std::nullopt;
    if (memory && memory->over_limit()) {
      co_return unexpected(StoreError{
          StoreErrc::out_of_memory,
          fmt::format("Redis is out of memory ({}: used_memory {} bytes, maxmemory {}) and "
                      "refuses new jobs until memory is freed: raise maxmemory, or fetch kept "
                      "results, delete dead jobs and let workers finish the queued jobs",
                      node.node, memory->used, memory->max)});
    }
    if (info.is_string() && info.str.find("\nrole:slave") != std::string::npos) {
      co_return unexpected(StoreError{
          StoreErrc::unavailable,
          "Redis at " + node.node +
              " is a replica now (after a failover?) and refuses writes; the master connects "
              "again to what redis.url names every couple of seconds: point it at the primary"});
    }
  }
  co_return Expected<void, StoreError>{};
}

// From INFO rather than CONFIG GET: managed Redis services often disable CONFIG, not INFO.
asio::awaitable<void> QueueStore::check_eviction_policy(redis::Phase phase) {
  std::vector<Command> commands{{"INFO", "memory"}};
  const auto nodes = co_await redis_.on_every_master(std::move(commands), phase);
  for (const auto& node : nodes) {
    const auto& info = node.replies;
    const redis::Reply* text = info && !info->elements.empty() ? &info->elements[0] : nullptr;
    const auto memory =
        text && text->is_string() ? redis::parse_memory_info(text->str) : std::nullopt;
    if (memory && memory->policy == "noeviction") continue;
    if (memory && !memory->policy.empty()) {
      spdlog::warn(
          "Redis's maxmemory-policy is {} (at {}): a Redis that reaches maxmemory deletes keys, "
          "which loses jobs, results and registrations. Set maxmemory-policy noeviction: a full "
          "Redis then refuses new jobs (503) and keeps what it has",
          memory->policy, node.node);
      continue;
    }
    const std::string why = !info                      ? info.error().message()
                            : text && text->is_error() ? text->str
                                                       : "it has no maxmemory_policy";
    spdlog::warn(
        "could not check Redis's maxmemory-policy (at {}; INFO memory: {}): make sure it is "
        "noeviction, or a Redis that reaches maxmemory deletes jobs and results",
        node.node, why);
  }
}

}  // namespace jq::store
