// Successes of one shard, recorded with as few completeJobs calls as the load allows: an answer
// that arrives while no call is on its way goes at once (no added wait); answers that arrive
// while one is on its way wait for it and then go together in the next call.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "common/expected.hpp"
#include "src/redis/client.hpp"
#include "src/redis/keys.hpp"
#include "src/store/store_error.hpp"

namespace jq::store {

namespace asio = boost::asio;

class CompletionBatcher {
 public:
  // True: done; false: stale (the attempt was already given up on).
  using Result = Expected<bool, StoreError>;

  CompletionBatcher(redis::Client& redis, const redis::Keys& keys, int shard,
                    std::string result_ttl_s);
  ~CompletionBatcher();

  asio::awaitable<Result> complete(std::string field, int attempt, std::string result);

  struct Waiter;  // a coroutine waiting for its outcome (completion_batcher.cpp)

 private:
  struct Pending {
    std::string field;
    std::string attempt;
    std::string result;
    std::unique_ptr<Waiter> waiter;
  };

  void enqueue(Pending pending, const asio::any_io_executor& executor);
  asio::awaitable<void> flush();

  redis::Client& redis_;
  std::vector<std::string> keys_;  // completeJobs' KEYS
  std::string shard_;
  std::string result_ttl_s_;
  std::string channel_;
  std::mutex mutex_;
  std::vector<Pending> pending_;
  bool flushing_ = false;
};

}  // namespace jq::store
