// Hands slots and rate tokens decided under {c} to the jobs held in the shards (docs/REDIS.md,
// "Constraints"): {c} answers wake orders (a pair, a shard, how many), the master runs each in
// its shard (unholdJobs: the oldest held jobs become ready) and reports what it found back under
// {c} (ackWake), which may give more orders. No script touches two hash tags; every step is
// idempotent, and a hand-off its master never finished is looked at again by wakeConstraints
// (wake_due), so losing one delays jobs but never strands them. When `joined` says so (one
// Redis: scripts may span hash tags), wakeConstraints runs its orders itself and none come here.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "common/expected.hpp"
#include "src/redis/bindings/wake_orders.hpp"
#include "src/redis/client.hpp"
#include "src/redis/keys.hpp"
#include "src/store/store_error.hpp"
#include "src/util/time.hpp"

namespace jq::store {

namespace asio = boost::asio;

class Handoff {
 public:
  using WakeOrder = redis::bindings::WakeOrder;

  Handoff(redis::Client& redis, redis::Keys keys, int shards, SystemClock clock,
          std::function<bool()> joined);

  // Runs the orders, and the ones their acknowledgements give, until none is left. A failure is
  // logged and ends the run: wake_due() picks the pairs up again.
  asio::awaitable<void> run(std::vector<WakeOrder> orders);
  // run(), without waiting for it.
  void start(std::vector<WakeOrder> orders);
  // Whether the scripts that give wake orders run them themselves (one Redis).
  bool joined() const { return joined_(); }
  // The pairs whose time to look again came (wakeConstraints, at most `max_pairs` per call, in
  // rounds while more are due), woken; the earliest due time left (nullopt: none).
  asio::awaitable<Expected<std::optional<std::int64_t>, StoreError>> wake_due(int max_pairs);

 private:
  std::int64_t now_ms() const { return epoch_ms(clock_()); }

  redis::Client& redis_;
  redis::Keys keys_;
  int shards_;
  SystemClock clock_;
  std::function<bool()> joined_;
};

}  // namespace jq::store
