#include "src/store/job_store.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include "src/redis/bindings/cancel_job.hpp"
#include "src/redis/bindings/fetch_result.hpp"
#include "src/redis/bindings/get_job.hpp"
#include "src/redis/bindings/init_store.hpp"
#include "src/redis/bindings/push_jobs.hpp"
#include "src/redis/errc.hpp"
#include "src/store/job_routing.hpp"
#include "src/util/time.hpp"

namespace jq::store {
namespace {

using redis::bindings::CancelJob;
using redis::bindings::FetchResult;
using redis::bindings::GetJob;
using redis::bindings::InitStore;
using redis::bindings::PushJobs;

static_assert(static_cast<int>(PushJobs::OnDuplicate::keep) ==
                  static_cast<int>(api::OnDuplicate::keep) &&
              static_cast<int>(PushJobs::OnDuplicate::replace) ==
                  static_cast<int>(api::OnDuplicate::replace) &&
              static_cast<int>(PushJobs::OnDuplicate::append) ==
                  static_cast<int>(api::OnDuplicate::append));

// Jobs in one merged pushJobs call: a request larger than this goes alone (kMaxBatchJobs).
constexpr std::size_t kMaxMergedJobs = 256;
// A request of at least this many jobs for one shard makes its own pushJobs call at once, beside
// any call on its way: group commit gains nothing there, and waiting for the shard's call on its
// way (shard_run sends its requests in a row to one shard: 64 when this was measured) made
// batches of 100 from 16 connections store a quarter fewer jobs per second.
constexpr std::size_t kOwnCallJobs = 32;

// pushJobs' plain job without constraints, the only kind it takes at once (lua/pushJobs-10.lua:
// may_take).
bool may_skip_queue(const PushJobs::Job& job) {
  return PushJobs::is_plain(job) && job.constraints.empty();
}

}  // namespace

JobStore::JobStore(redis::Client& redis, redis::Keys keys, int shards, Clock clock, int shard_run)
    : redis_(redis),
      keys_(std::move(keys)),
      shards_(shards),
      shard_run_(static_cast<unsigned>(std::max(1, shard_run))),
      clock_(std::move(clock)) {
  // Requests of one traceparent (usually none) merge, up to kMaxMergedJobs in a call.
  auto take = [](const std::vector<PushItem>& waiting) {
    std::size_t n = 1;
    std::size_t jobs = waiting.front().jobs.size();
    while (n < waiting.size() && waiting[n].traceparent == waiting.front().traceparent &&
           jobs + waiting[n].jobs.size() <= kMaxMergedJobs) {
      jobs += waiting[n++].jobs.size();
    }
    return n;
  };
  for (int s = 0; s < shards_; ++s) {
    pushes_.push_back(std::make_unique<PushBatcher>(
        redis_.executor(),
        [this, s](std::vector<PushItem> items) { return send_pushes(s, std::move(items)); }, take,
        [] { return PushResult(unexpected(StoreError::internal("storing the jobs failed"))); }));
  }
}

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

// The slots claimed for one request's jobs, by position: each claim is settled exactly once,
// with its job when pushJobs took it, else with none (not taken, or the push failed), which
// frees the slot. Settled explicitly, not by the destructor: a coroutine frame destroyed without
// resuming (at shutdown, after the grace period) may outlive the scheduler.
class JobStore::ClaimedSlots {
 public:
  ClaimedSlots() = default;
  ClaimedSlots(DirectDispatch* direct, std::vector<std::optional<SlotClaim>> claims)
      : direct_(direct), claims_(std::move(claims)) {}
  ClaimedSlots(ClaimedSlots&&) = default;
  ClaimedSlots& operator=(ClaimedSlots&&) = default;
  ClaimedSlots(const ClaimedSlots&) = delete;
  ClaimedSlots& operator=(const ClaimedSlots&) = delete;

  void hand(std::size_t position, ReservedJob job) {
    if (!direct_ || position >= claims_.size() || !claims_[position]) return;
    direct_->settle(*claims_[position], std::move(job));
    claims_[position].reset();
  }
  // The claims not handed a job: their slots are free again.
  void settle_rest() {
    if (!direct_) return;
    for (auto& claim : claims_) {
      if (claim) direct_->settle(*claim, std::nullopt);
      claim.reset();
    }
  }

 private:
  DirectDispatch* direct_ = nullptr;
  std::vector<std::optional<SlotClaim>> claims_;
};

// Only a request whose jobs may all skip the queue asks (then they all go to one shard, and the
// best priorities get the slots): a job of the request that is queued instead, in another shard
// or behind an ordering key, would be announced too late for the claims to see it, and a job
// taken at once could run before it though it should not.
bool JobStore::may_claim() const {
  // A job taken at once could be sent before WAIT confirmed its push: replicas_ack queues all.
  return direct_ && replicas_ack_ == 0 && direct_->may_claim();
}

asio::awaitable<JobStore::ClaimedSlots> JobStore::claim_slots(PushItem& item) {
  std::vector<ClaimWanted> wanted;
  for (const PushJobs::Job& job : item.jobs) {
    if (!may_skip_queue(job)) co_return ClaimedSlots{};
    wanted.push_back(ClaimWanted{job.name, job.priority});
  }
  std::vector<std::optional<SlotClaim>> claims = co_await direct_->claim(std::move(wanted));
  // Resumed by the scheduler's strand: leave it before building the call.
  co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
  claims.resize(item.jobs.size());
  if (std::none_of(claims.begin(), claims.end(), [](const auto& c) { return c.has_value(); })) {
    co_return ClaimedSlots{};
  }
  item.take.assign(item.jobs.size(), '0');
  for (std::size_t i = 0; i < claims.size(); ++i) {
    if (claims[i]) item.take[i] = '1';
  }
  co_return ClaimedSlots(direct_, std::move(claims));
}

asio::awaitable<Expected<Pushed, StoreError>> JobStore::push(std::vector<api::NewJob> jobs,
                                                             std::string traceparent) {
  if (constraints_ && !constraints_->loaded()) {
    auto loaded = co_await constraints_->load_first();
    if (!loaded) co_return unexpected(std::move(loaded.error()));
  }
  // Runs of requests share a shard: the scheduler then finds consecutive jobs in one queue and
  // reserves them together instead of one per shard it alternates between.
  const int spread = static_cast<int>(next_shard_.fetch_add(1, std::memory_order_relaxed) /
                                      shard_run_ % static_cast<unsigned>(shards_));
  const std::int64_t now = now_ms();
  ShardGroups groups = group_by_shard(jobs, spread);
  // One snapshot for the whole batch: every job is matched against the same constraints.
  const std::shared_ptr<const ConstraintSet> constraints =
      constraints_ ? constraints_->current() : nullptr;
  Pushed out;
  out.ids.resize(jobs.size());
  std::vector<PushItem> items;
  items.reserve(groups.size());
  for (const ShardGroup& group : groups) {
    PushItem& item = items.emplace_back(PushItem{{}, traceparent, {}});
    item.jobs.reserve(group.positions.size());
    for (std::size_t at : group.positions) {
      item.jobs.push_back(push_job_args(std::move(jobs[at]), now, constraints.get()));
    }
  }
  // A transaction spans hash tags only where a script may (not on a cluster, nor on one cluster
  // node reached by redis://).
  if (groups.size() > 1 && redis_.scripts_span_tags()) {
    std::vector<PushResult> pushed = co_await push_across_shards(groups, std::move(items));
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (!pushed[g]) co_return unexpected(std::move(pushed[g].error()));
      add_pushed(out, groups[g], std::move(*pushed[g]));
    }
  } else {
    // One shard, or a cluster: one call per shard, each all or nothing (no transaction spans
    // the slots of two shards there).
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const ShardGroup& group = groups[g];
      PushItem& item = items[g];
      ClaimedSlots claims;
      // Asked before the coroutine: most pushes cannot claim, and need not pay for its frame.
      if (groups.size() == 1 && may_claim()) claims = co_await claim_slots(item);
      // An if, not ?: between two co_awaits: g++ 12 miscompiles that (the master crashed).
      PushResult pushed = unexpected(StoreError{});
      try {
        if (item.jobs.size() >= kOwnCallJobs) {
          pushed = co_await push_alone(group.shard, std::move(item));
        } else {
          pushed = co_await pushes_[static_cast<std::size_t>(group.shard)]->submit(std::move(item));
        }
      } catch (...) {
        claims.settle_rest();
        throw;
      }
      if (!pushed) {
        claims.settle_rest();
        co_return unexpected(std::move(pushed.error()));
      }
      for (PushJobs::Taken& taken : pushed->taken) {
        auto record = decode_boxed_record(taken.record);
        if (!record) {
          spdlog::error(
              "pushJobs: unreadable record of taken job {}; it runs once its attempt "
              "times out",
              pushed->fields[taken.position]);
          continue;
        }
        // The script's deadline: its now (the record's enqueued_at) plus the timeout.
        const std::int64_t deadline = record->enqueued_at_ms + record->timeout_ms;
        claims.hand(taken.position, ReservedJob{JobId{group.shard, pushed->fields[taken.position]},
                                                std::move(record), deadline});
      }
      claims.settle_rest();
      add_pushed(out, group, std::move(*pushed));
    }
  }
  std::sort(out.duplicates.begin(), out.duplicates.end());
  std::sort(out.merged.begin(), out.merged.end());
  co_return out;
}

// A shard's part of the answer, at its jobs' positions in the request.
void JobStore::add_pushed(Pushed& out, const ShardGroup& group, PushJobs::Pushed pushed) {
  for (std::size_t i = 0; i < group.positions.size(); ++i) {
    out.ids[group.positions[i]] = JobId{group.shard, std::move(pushed.fields[i])}.str();
  }
  for (std::size_t d : pushed.duplicates) out.duplicates.push_back(group.positions[d]);
  for (std::size_t m : pushed.merged) out.merged.push_back(group.positions[m]);
}

asio::awaitable<JobStore::PushResult> JobStore::push_alone(int shard, PushItem item) {
  std::vector<PushItem> one;
  one.push_back(std::move(item));
  std::vector<PushResult> results = co_await send_pushes(shard, std::move(one));
  co_return std::move(results.front());
}

// One pushJobs call for the requests' jobs, in order; each request gets its own fields and
// duplicates back (a duplicate of a job of an earlier request in the call names that job).
asio::awaitable<std::vector<JobStore::PushResult>> JobStore::send_pushes(
    int shard, std::vector<PushItem> items) {
  PushCall push = push_call(shard, std::move(items));
  redis::ReplyResult reply;
  if (!pushes_may_go()) {
    reply = unexpected(make_error_code(redis::Errc::not_connected));
  } else if (replicas_ack_ > 0) {
    reply = co_await confirmed_->eval_replicated(std::move(push.call), replicas_ack_,
                                                 replicas_ack_timeout_);
  } else {
    reply = co_await redis_.eval(std::move(push.call));
  }
  // A call that may have taken jobs and whose answer is lost or unreadable: they may be running,
  // sent to no worker (the pushers are told the push failed). (A call that takes is never one
  // waiting for replicas: may_claim.)
  const bool may_have_run = reply || redis::may_have_run(reply.error());
  std::vector<PushResult> results = split_pushed(std::move(reply), push.sizes);
  if (!push.taken_by.empty() && may_have_run && !results.front()) {
    lost_->lost(shard, std::move(push.taken_by), push.now_ms);
  }
  co_return results;
}

JobStore::PushCall JobStore::push_call(int shard, std::vector<PushItem> items) {
  PushJobs::Args args{now_ms(),
                      next_ready_stamp_us(),
                      keys_.events_channel(shard),
                      std::move(items.front().traceparent),
                      shard,
                      static_cast<std::int64_t>(max_list_bytes_),
                      {},
                      {},
                      {}};
  PushCall out;
  out.sizes.reserve(items.size());
  const bool take = std::any_of(items.begin(), items.end(),
                                [](const PushItem& item) { return !item.take.empty(); });
  for (PushItem& item : items) {
    out.sizes.push_back(item.jobs.size());
    if (take) args.take += item.take.empty() ? std::string(item.jobs.size(), '0') : item.take;
    std::move(item.jobs.begin(), item.jobs.end(), std::back_inserter(args.jobs));
  }
  if (take && lost_ != nullptr) {
    out.taken_by = lost_->next_token();
    out.now_ms = args.now_ms;
    args.taken_by = out.taken_by;
  }
  out.call = PushJobs::call(PushJobs::keys(keys_, shard), std::move(args));
  return out;
}

std::vector<JobStore::PushResult> JobStore::split_pushed(redis::ReplyResult reply,
                                                         const std::vector<std::size_t>& sizes) {
  std::vector<PushResult> out;
  out.reserve(sizes.size());
  if (!reply) {
    out.assign(sizes.size(), PushResult(unexpected(StoreError::unavailable(reply.error()))));
    return out;
  }
  std::size_t total = 0;
  for (const std::size_t size : sizes) total += size;
  auto pushed = PushJobs::decode(*reply, total);
  if (!pushed) {
    out.assign(sizes.size(), PushResult(unexpected(StoreError::bad_reply(pushed.error()))));
    return out;
  }
  std::size_t first = 0;
  auto duplicate = pushed->duplicates.begin();  // ascending
  auto merged = pushed->merged.begin();         // ascending
  auto taken = pushed->taken.begin();           // ascending
  for (const std::size_t size : sizes) {
    PushJobs::Pushed part;
    part.fields.assign(std::make_move_iterator(pushed->fields.begin() + first),
                       std::make_move_iterator(pushed->fields.begin() + first + size));
    for (; duplicate != pushed->duplicates.end() && *duplicate < first + size; ++duplicate) {
      part.duplicates.push_back(*duplicate - first);
    }
    for (; merged != pushed->merged.end() && *merged < first + size; ++merged) {
      part.merged.push_back(*merged - first);
    }
    for (; taken != pushed->taken.end() && taken->position < first + size; ++taken) {
      part.taken.push_back(PushJobs::Taken{taken->position - first, std::move(taken->record)});
    }
    out.emplace_back(std::move(part));
    first += size;
  }
  return out;
}

// A request's jobs in several shards of one Redis, all or none: a pushJobs call per shard in one
// MULTI/EXEC, so that a refusal (Redis over maxmemory, loading) or a lost connection stores none
// of them. Beside the shards' group commits: such requests are rare (keyed jobs in a batch).
asio::awaitable<std::vector<JobStore::PushResult>> JobStore::push_across_shards(
    const ShardGroups& groups, std::vector<PushItem> items) {
  std::vector<redis::ScriptCall> calls;
  calls.reserve(items.size());
  std::vector<std::size_t> sizes;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::vector<PushItem> one;
    one.push_back(std::move(items[g]));
    PushCall push = push_call(groups[g].shard, std::move(one));
    sizes.push_back(push.sizes.front());
    calls.push_back(std::move(push.call));
  }
  redis::ReplyResult replies = unexpected(make_error_code(redis::Errc::not_connected));
  if (pushes_may_go()) {
    replies =
        co_await confirmed_->eval_atomic(std::move(calls), replicas_ack_, replicas_ack_timeout_);
  }
  std::vector<PushResult> out;
  out.reserve(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    redis::ReplyResult reply =
        !replies ? redis::ReplyResult(unexpected(replies.error()))
        : replies->is_array() && replies->elements.size() == groups.size()
            ? redis::ReplyResult(std::move(replies->elements[g]))
            : redis::ReplyResult(*replies);  // an error for all: decoding says which
    out.push_back(std::move(split_pushed(std::move(reply), {sizes[g]}).front()));
  }
  co_return out;
}

// The shards a batch goes to, each with the positions of its jobs in push order; jobs that may
// go anywhere go to `spread`.
JobStore::ShardGroups JobStore::group_by_shard(const std::vector<api::NewJob>& jobs,
                                               int spread) const {
  ShardGroups groups;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const int shard = routed_shard(jobs[i], shards_).value_or(spread);
    auto group = std::find_if(groups.begin(), groups.end(),
                              [shard](const ShardGroup& g) { return g.shard == shard; });
    if (group == groups.end()) group = groups.insert(groups.end(), ShardGroup{shard, {}});
    group->positions.push_back(i);
  }
  return groups;
}

PushJobs::Job push_job_args(api::NewJob job, std::int64_t now_ms,
                            const ConstraintSet* constraints) {
  // Matched against the argument pushed, also for an append, whose job lists the arguments:
  // the contract matches a merged job by the last element appended.
  std::string matched;
  if (constraints && !constraints->constraints().empty()) {
    matched = encode_matched(constraints->match(job.name, job.argument));
  }
  // 0 when neither delay nor run_at was given; a given one (even delay 0) is a time, which a
  // replace merge takes as the job's new ready time.
  std::int64_t ready_at_ms = 0;
  if (job.ready_at.run_at_ms) {
    // 0 says "no time given" to the scripts: a run_at at or before 1970 is a past time, now.
    ready_at_ms = std::max<std::int64_t>(*job.ready_at.run_at_ms, 1);
  } else if (job.ready_at.given) {
    ready_at_ms = now_ms + job.ready_at.delay.count();
  }
  return PushJobs::Job{std::move(job.name),
                       std::move(job.argument),
                       job.priority,
                       job.max_retry,
                       job.keep_result,
                       job.timeout.count(),
                       ready_at_ms,
                       std::move(job.unique_key),
                       job.unique_until == api::UniqueUntil::started,
                       job.unique_for.count(),
                       std::move(job.ordering_key),
                       std::move(matched),
                       static_cast<PushJobs::OnDuplicate>(job.on_duplicate)};
}

asio::awaitable<Expected<JobRecord, StoreError>> JobStore::get(JobId id) {
  redis::ScriptCall call = GetJob::call(GetJob::keys(keys_, id.shard, id.field), {id.field});
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  auto raw = GetJob::decode(*reply);
  if (!raw) co_return unexpected(StoreError::bad_reply(raw.error()));
  if (!*raw) co_return unexpected(StoreError{StoreErrc::not_found, "no job " + id.str()});
  auto record = decode_record(**raw);
  if (!record) co_return unexpected(StoreError::internal("unreadable record of job " + id.str()));
  co_return std::move(*record);
}

asio::awaitable<Expected<void, StoreError>> JobStore::cancel(JobId id) {
  redis::ScriptCall call =
      CancelJob::call(CancelJob::keys(keys_, id.shard, id.field),
                      {id.field, now_ms(), keys_.events_channel(id.shard), id.shard});
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  auto status = CancelJob::decode(*reply);
  if (!status) co_return unexpected(StoreError::bad_reply(status.error()));
  switch (*status) {
    case CancelJob::Status::cancelled:
      co_return Expected<void, StoreError>{};
    case CancelJob::Status::not_found:
      co_return unexpected(StoreError{StoreErrc::not_found, "no job " + id.str()});
    case CancelJob::Status::running:
      co_return unexpected(StoreError{StoreErrc::conflict,
                                      "job " + id.str() + " is running and cannot be cancelled"});
    case CancelJob::Status::finished:
      co_return unexpected(
          StoreError{StoreErrc::conflict, "job " + id.str() + " has already finished"});
  }
  co_return unexpected(StoreError::internal("cancelJob: unhandled status"));
}

asio::awaitable<Expected<ResultFetch, StoreError>> JobStore::fetch_result(
    JobId id, std::chrono::milliseconds watch) {
  redis::ScriptCall call =
      FetchResult::call(FetchResult::keys(keys_, id.shard, id.field), {id.field, watch.count()});
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  auto fetched = FetchResult::decode(*reply);
  if (!fetched) co_return unexpected(StoreError::bad_reply(fetched.error()));
  ResultFetch out;
  switch (fetched->status) {
    case FetchResult::Status::nothing:
      break;
    case FetchResult::Status::result:
      out.kind = ResultFetch::Kind::result;
      out.result = std::move(fetched->result);
      break;
    case FetchResult::Status::pending: {
      auto state = job_state_from_int(fetched->state);
      if (!state) co_return unexpected(StoreError::internal("fetchResult: bad state"));
      out.kind = ResultFetch::Kind::pending;
      out.state = *state;
      out.attempts = static_cast<int>(fetched->attempts);
      out.keep_result = fetched->keep_result;
      break;
    }
  }
  co_return out;
}

asio::awaitable<Expected<bool, std::error_code>> JobStore::verify_shards(redis::Phase phase) {
  redis::ScriptCall call =
      InitStore::call(InitStore::keys(keys_), {shards_, now_ms(), redis::Keys::kLayoutVersion});
  auto reply = co_await redis_.eval(std::move(call), phase);
  if (!reply) co_return unexpected(reply.error());
  auto stored = InitStore::decode(*reply);
  if (!stored) {
    spdlog::error("initStore failed: {}", stored.error().message());
    co_return false;
  }
  const std::int64_t stored_shards = stored->shards;
  const std::int64_t stored_version = stored->layout_version;
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
