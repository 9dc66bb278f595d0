#include "src/store/job_store.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>
#include "src/util/time.hpp"

namespace jq::store {
namespace {

using redis::ScriptCall;
using redis::ScriptId;

constexpr std::size_t kArgsPerBatch = 5;  // pushJobs-5.lua: now, stamp, channel, traceparent, shard
constexpr std::size_t kArgsPerJob = 6;    // then six ARGV per job

}  // namespace

JobStore::JobStore(redis::Client& redis, redis::Keys keys, int shards, Clock clock, int shard_run)
    : redis_(redis),
      keys_(std::move(keys)),
      shards_(shards),
      shard_run_(static_cast<unsigned>(std::max(1, shard_run))),
      clock_(std::move(clock)) {}

std::int64_t JobStore::now_ms() const {
  return epoch_ms(clock_());
}

// Microseconds, strictly increasing on this master, so jobs pushed through one master become
// ready in push order even across shards and within one clock tick.
std::int64_t JobStore::next_ready_stamp_us() {
  const std::int64_t now = epoch_us(clock_());
  std::int64_t last = last_stamp_us_.load(std::memory_order_relaxed);
  std::int64_t next;
  do {
    next = std::max(now, last + 1);
  } while (!last_stamp_us_.compare_exchange_weak(last, next, std::memory_order_relaxed));
  return next;
}

asio::awaitable<Expected<std::vector<std::string>, StoreError>> JobStore::push(
    std::vector<api::NewJob> jobs, std::string traceparent) {
  // Runs of requests share a shard: the scheduler then finds consecutive jobs in one queue and
  // reserves them together instead of one per shard it alternates between.
  const int shard = static_cast<int>(next_shard_.fetch_add(1, std::memory_order_relaxed) /
                                     shard_run_ % static_cast<unsigned>(shards_));
  ScriptCall call{ScriptId::push_jobs,
                  {keys_.stats(shard), keys_.jobs_prefix(shard), keys_.names(shard),
                   keys_.ready_prefix(shard), keys_.counts(shard)},
                  {}};
  call.args.reserve(kArgsPerBatch + jobs.size() * kArgsPerJob);
  call.args.push_back(std::to_string(now_ms()));
  call.args.push_back(std::to_string(next_ready_stamp_us()));
  call.args.push_back(keys_.events_channel());
  call.args.push_back(std::move(traceparent));
  call.args.push_back(std::to_string(shard));
  for (api::NewJob& job : jobs) {
    call.args.push_back(std::move(job.name));
    call.args.push_back(std::move(job.argument));
    call.args.push_back(std::to_string(job.priority));
    call.args.push_back(std::to_string(job.max_retry));
    call.args.push_back(job.keep_result ? "1" : "0");
    call.args.push_back(std::to_string(job.timeout.count()));
  }
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  if (!reply->is_array() || reply->elements.size() != jobs.size()) {
    co_return unexpected(StoreError::bad_reply("pushJobs", *reply));
  }
  std::vector<std::string> ids;
  ids.reserve(jobs.size());
  for (const redis::Reply& field : reply->elements) ids.push_back(JobId{shard, field.str}.str());
  co_return ids;
}

asio::awaitable<Expected<JobRecord, StoreError>> JobStore::get(JobId id) {
  ScriptCall call{
      ScriptId::get_job, {keys_.jobs_prefix(id.shard), keys_.done(id.shard, id.field)}, {id.field}};
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  if (reply->is_nil()) {
    co_return unexpected(StoreError{StoreErrc::not_found, "no job " + id.str()});
  }
  if (!reply->is_string()) co_return unexpected(StoreError::internal("getJob: " + reply->str));
  auto record = decode_record(reply->str);
  if (!record) co_return unexpected(StoreError::internal("unreadable record of job " + id.str()));
  co_return std::move(*record);
}

asio::awaitable<Expected<void, StoreError>> JobStore::cancel(JobId id) {
  ScriptCall call{
      ScriptId::cancel_job,
      {keys_.jobs_prefix(id.shard), keys_.scheduled(id.shard), keys_.done(id.shard, id.field),
       keys_.counts(id.shard), keys_.ready_prefix(id.shard)},
      {id.field}};
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  switch (reply->is_integer() ? reply->integer : 0) {
    case 1:
      co_return Expected<void, StoreError>{};
    case -1:
      co_return unexpected(StoreError{StoreErrc::not_found, "no job " + id.str()});
    case -2:
      co_return unexpected(StoreError{StoreErrc::conflict,
                                      "job " + id.str() + " is running and cannot be cancelled"});
    case -3:
      co_return unexpected(
          StoreError{StoreErrc::conflict, "job " + id.str() + " has already finished"});
    default:
      co_return unexpected(StoreError::bad_reply("cancelJob", *reply));
  }
}

asio::awaitable<Expected<ResultFetch, StoreError>> JobStore::fetch_result(JobId id) {
  ScriptCall call{ScriptId::fetch_result,
                  {keys_.jobs_prefix(id.shard), keys_.done(id.shard, id.field)},
                  {id.field}};
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  const auto& e = reply->elements;
  if (!reply->is_array() || e.empty() || !e[0].is_integer()) {
    co_return unexpected(StoreError::bad_reply("fetchResult", *reply));
  }
  ResultFetch out;
  if (e[0].integer == 1 && e.size() == 2) {
    out.kind = ResultFetch::Kind::result;
    out.result = e[1].str;
  } else if (e[0].integer == 2 && e.size() == 4) {
    auto state = job_state_from_int(e[1].integer);
    if (!state) co_return unexpected(StoreError::internal("fetchResult: bad state"));
    out.kind = ResultFetch::Kind::pending;
    out.state = *state;
    out.attempts = static_cast<int>(e[2].integer);
    out.keep_result = e[3].integer == 1;
  }
  co_return out;
}

asio::awaitable<Expected<bool, std::error_code>> JobStore::verify_shards(redis::Phase phase) {
  ScriptCall call{ScriptId::init_store,
                  {keys_.meta()},
                  {std::to_string(shards_), std::to_string(now_ms()),
                   std::to_string(redis::Keys::kLayoutVersion)}};
  auto reply = co_await redis_.eval(std::move(call), phase);
  if (!reply) co_return unexpected(reply.error());
  if (!reply->is_array() || reply->elements.size() != 2 || !reply->elements[0].is_integer() ||
      !reply->elements[1].is_integer()) {
    spdlog::error("initStore failed: {}", reply->str);
    co_return false;
  }
  const std::int64_t stored_shards = reply->elements[0].integer;
  const std::int64_t stored_version = reply->elements[1].integer;
  if (stored_version != redis::Keys::kLayoutVersion) {
    spdlog::critical(
        "the data store in this Redis database has data layout {}, this master reads layout {}. "
        "Finish its jobs with the jqmaster release that wrote them, or give this master another "
        "Redis database (redis.url, e.g. redis://host:6379/1)",
        stored_version, redis::Keys::kLayoutVersion);
    co_return false;
  }
  if (stored_shards != shards_) {
    spdlog::critical(
        "the data store was created with shards: {}, but this master has shards: {}. The shard "
        "count is fixed when the store is created: set shards: {} (or use another Redis "
        "database for a store with {} shards)",
        stored_shards, shards_, stored_shards, shards_);
    co_return false;
  }
  co_return true;
}

}  // namespace jq::store
