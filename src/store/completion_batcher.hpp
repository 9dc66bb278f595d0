// Successes of one shard, recorded with as few completeJobs calls as the load allows: an answer
// that arrives while no call is on its way goes at once (no added wait); answers that arrive
// while one is on its way wait for it and then go together in the next call.
//
// Everything it keeps belongs to its strand: complete() posts the answer there, and one
// coroutine on the strand sends what is pending, call after call, until nothing is.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/strand.hpp>

#include "common/expected.hpp"
#include "src/redis/bindings/complete_jobs.hpp"
#include "src/redis/client.hpp"
#include "src/redis/keys.hpp"
#include "src/store/store_error.hpp"
#include "src/util/time.hpp"

namespace jq::store {

namespace asio = boost::asio;

class CompletionBatcher {
 public:
  // True: done; false: stale (the attempt was already given up on).
  using Result = Expected<bool, StoreError>;

  CompletionBatcher(redis::Client& redis, const redis::Keys& keys, int shard,
                    std::int64_t result_ttl_s, SystemClock clock);
  ~CompletionBatcher();

  asio::awaitable<Result> complete(std::string field, int attempt, std::string result);

  struct Waiter;  // a coroutine waiting for its outcome (completion_batcher.cpp)

 private:
  struct Pending {
    redis::bindings::CompleteJobs::Job job;
    std::unique_ptr<Waiter> waiter;
  };

  void enqueue(Pending pending);  // on the strand
  asio::awaitable<void> flush();  // on the strand, while anything is pending
  asio::awaitable<void> send(std::vector<Pending> batch);
  redis::ScriptCall call_for(std::vector<Pending>& batch) const;

  redis::Client& redis_;
  asio::strand<asio::any_io_executor> strand_;
  redis::bindings::CompleteJobs::Keys keys_;
  int shard_;
  std::int64_t result_ttl_s_;
  std::string channel_;
  SystemClock clock_;  // "now" for an ordering key's next job (its delay may not have passed)
  std::vector<Pending> pending_;
  bool flushing_ = false;
};

}  // namespace jq::store
