// Successes of one shard, recorded with as few completeJobs calls as the load allows
// (CallBatcher): an answer that arrives while no call is on its way goes with those read in the
// same moment (no added wait); answers that arrive while one is on its way wait for it and then
// go together in the next call. When `joined` says so (a Redis that lets a script span hash tags),
// the jobs' constraint leases are released in the same call, and the slots they free are handed to
// held jobs in it too.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "common/expected.hpp"
#include "src/redis/bindings/complete_jobs.hpp"
#include "src/redis/client.hpp"
#include "src/redis/keys.hpp"
#include "src/store/call_batcher.hpp"
#include "src/store/store_error.hpp"
#include "src/util/time.hpp"

namespace jq::store {

// What became of a success: stale (the attempt was already given up on), done, or done with
// its kept result left to the caller to hand to a poll that waits for it (not stored).
enum class Completed { stale, done, handed };

class CompletionBatcher {
 public:
  using Result = Expected<Completed, StoreError>;

  CompletionBatcher(redis::Client& redis, const redis::Keys& keys, int shard,
                    std::int64_t result_ttl_s, SystemClock clock, std::function<bool()> joined);

  // `handed`: polls of this master wait for the result (ResultWaiters::claim), this many of them
  // known to be counted in the job's watch key.
  asio::awaitable<Result> complete(std::string field, int attempt, std::string result,
                                   std::optional<std::int64_t> handed);

 private:
  using Job = redis::bindings::CompleteJobs::Job;
  asio::awaitable<std::vector<Result>> send(std::vector<Job> jobs);

  redis::Client& redis_;
  redis::bindings::CompleteJobs::Keys keys_;         // without the constraints' keys
  redis::bindings::CompleteJobs::Keys joined_keys_;  // with them
  int shard_;
  std::int64_t result_ttl_s_;
  std::string channel_;
  SystemClock clock_;  // "now" for an ordering key's next job (its delay may not have passed)
  std::function<bool()> joined_;
  CallBatcher<Job, Result> batcher_;
};

}  // namespace jq::store
