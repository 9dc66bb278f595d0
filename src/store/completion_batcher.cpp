#include "src/store/completion_batcher.hpp"

namespace jq::store {
namespace {

using redis::bindings::CompleteJobs;

constexpr std::size_t kMaxBatch = 256;  // jobs per completeJobs call

}  // namespace

CompletionBatcher::CompletionBatcher(redis::Client& redis, const redis::Keys& keys, int shard,
                                     std::int64_t result_ttl_s, SystemClock clock,
                                     std::function<bool()> joined)
    : redis_(redis),
      keys_(CompleteJobs::keys(keys, shard)),
      joined_keys_(CompleteJobs::keys(keys, shard, true)),
      shard_(shard),
      result_ttl_s_(result_ttl_s),
      channel_(keys.events_channel(shard)),
      clock_(std::move(clock)),
      joined_(std::move(joined)),
      batcher_(
          redis.executor(), [this](std::vector<Job> jobs) { return send(std::move(jobs)); },
          [](const std::vector<Job>& waiting) { return std::min(waiting.size(), kMaxBatch); },
          // Not recorded: the job runs again after its deadline.
          [] { return Result(unexpected(StoreError::internal("recording the success failed"))); }) {
}

asio::awaitable<CompletionBatcher::Result> CompletionBatcher::complete(
    std::string field, int attempt, std::string result, std::optional<std::int64_t> handed) {
  Job job{std::move(field), attempt, std::move(result), handed};  // not braced in co_await: g++ 12
  co_return co_await batcher_.submit(std::move(job));
}

// One completeJobs call for the batch: per job, done or stale, or the call's error for all.
asio::awaitable<std::vector<CompletionBatcher::Result>> CompletionBatcher::send(
    std::vector<Job> jobs) {
  const std::size_t n = jobs.size();
  CompleteJobs::Args args{result_ttl_s_, channel_, shard_, epoch_ms(clock_()), std::move(jobs)};
  redis::ScriptCall call = CompleteJobs::call(joined_() ? joined_keys_ : keys_, std::move(args));
  auto reply = co_await redis_.eval(std::move(call));
  std::vector<Result> out;
  out.reserve(n);
  if (!reply) {
    out.assign(n, Result(unexpected(StoreError::unavailable(reply.error()))));
    co_return out;
  }
  auto completed = CompleteJobs::decode(std::move(*reply), n);
  if (!completed) {
    out.assign(n, Result(unexpected(StoreError::bad_reply(completed.error()))));
    co_return out;
  }
  for (const CompleteJobs::Status status : *completed) {
    switch (status) {
      case CompleteJobs::Status::stale:
        out.emplace_back(Completed::stale);
        break;
      case CompleteJobs::Status::done:
        out.emplace_back(Completed::done);
        break;
      case CompleteJobs::Status::handed:
        out.emplace_back(Completed::handed);
        break;
    }
  }
  co_return out;
}

}  // namespace jq::store
