#include "src/store/completion_batcher.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace jq::store {
namespace {

using redis::bindings::CompleteJobs;

constexpr std::size_t kMaxBatch = 256;  // jobs per completeJobs call

}  // namespace

// A coroutine waiting for its job's outcome; resumed on its own executor.
struct CompletionBatcher::Waiter {
  virtual ~Waiter() = default;
  virtual void finish(Result result) = 0;
};

namespace {

template <class Handler>
struct HandlerWaiter final : CompletionBatcher::Waiter {
  explicit HandlerWaiter(Handler h) : handler(std::move(h)) {}
  void finish(CompletionBatcher::Result result) override {
    auto executor = asio::get_associated_executor(handler);
    asio::post(executor,
               [h = std::move(handler), r = std::move(result)]() mutable { h(std::move(r)); });
  }
  Handler handler;
};

}  // namespace

CompletionBatcher::CompletionBatcher(redis::Client& redis, const redis::Keys& keys, int shard,
                                     std::int64_t result_ttl_s, SystemClock clock)
    : redis_(redis),
      strand_(asio::make_strand(redis.executor())),
      keys_(CompleteJobs::keys(keys, shard)),
      shard_(shard),
      result_ttl_s_(result_ttl_s),
      channel_(keys.events_channel(shard)),
      clock_(std::move(clock)) {}

CompletionBatcher::~CompletionBatcher() = default;

asio::awaitable<CompletionBatcher::Result> CompletionBatcher::complete(std::string field,
                                                                       int attempt,
                                                                       std::string result) {
  Pending pending{CompleteJobs::Job{std::move(field), attempt, std::move(result)}, nullptr};
  co_return co_await asio::async_initiate<const asio::use_awaitable_t<>&, void(Result)>(
      [this, &pending](auto handler) {
        pending.waiter = std::make_unique<HandlerWaiter<decltype(handler)>>(std::move(handler));
        asio::post(strand_, [this, p = std::move(pending)]() mutable { enqueue(std::move(p)); });
      },
      asio::use_awaitable);
}

void CompletionBatcher::enqueue(Pending pending) {
  pending_.push_back(std::move(pending));
  if (std::exchange(flushing_, true)) return;  // the running flush takes it next
  asio::co_spawn(strand_, flush(), [this](std::exception_ptr e) {
    if (!e) return;
    flushing_ = false;
    // Never leave waiters hanging: fail what is pending and let the next success flush again.
    for (Pending& p : std::exchange(pending_, {})) {
      p.waiter->finish(unexpected(StoreError::internal("recording the success failed")));
    }
  });
}

asio::awaitable<void> CompletionBatcher::flush() {
  for (;;) {
    if (pending_.empty()) {
      flushing_ = false;  // here, not in the completion: an answer arriving between the two
      co_return;          // would otherwise wait for the next one
    }
    std::vector<Pending> batch;
    if (pending_.size() <= kMaxBatch) {
      batch.swap(pending_);
    } else {
      const auto end = pending_.begin() + kMaxBatch;
      batch.assign(std::make_move_iterator(pending_.begin()), std::make_move_iterator(end));
      pending_.erase(pending_.begin(), end);
    }
    co_await send(std::move(batch));
  }
}

// One completeJobs call for the batch, and every waiter of it answered, whatever happens.
asio::awaitable<void> CompletionBatcher::send(std::vector<Pending> batch) {
  try {
    auto reply = co_await redis_.eval(call_for(batch));
    const auto statuses = reply ? CompleteJobs::decode(*reply, batch.size())
                                : redis::bindings::Decoded<std::vector<CompleteJobs::Status>>{};
    for (std::size_t i = 0; i < batch.size(); ++i) {
      Result r = Result(false);
      if (!reply) {
        r = unexpected(StoreError::unavailable(reply.error()));
      } else if (!statuses) {
        r = unexpected(StoreError::bad_reply(statuses.error()));
      } else {
        r = (*statuses)[i] == CompleteJobs::Status::done;
      }
      std::exchange(batch[i].waiter, nullptr)->finish(std::move(r));
    }
  } catch (const std::exception&) {
    // Not recorded: the jobs run again after their deadline. Never leave a waiter hanging.
    for (Pending& p : batch) {
      if (p.waiter)
        p.waiter->finish(unexpected(StoreError::internal("recording the success failed")));
    }
  }
}

redis::ScriptCall CompletionBatcher::call_for(std::vector<Pending>& batch) const {
  CompleteJobs::Args args{result_ttl_s_, channel_, shard_, epoch_ms(clock_()), {}};
  args.jobs.reserve(batch.size());
  for (Pending& p : batch) args.jobs.push_back(std::move(p.job));
  return CompleteJobs::call(keys_, std::move(args));
}

}  // namespace jq::store
