// Moves retries whose backoff has passed into their ready queues, and lets jobs held back by
// constraints try again when their pair is due (a rate's next start; a hand-off or release a
// master never finished: wake_due under {c}). It sleeps until the earliest due time it knows of,
// of either kind; a due time announced by any master ("s <due>") wakes it if earlier.
#pragma once

#include <chrono>
#include <cstdint>

#include <boost/asio/io_context.hpp>

#include "src/events/event.hpp"
#include "src/redis/client.hpp"
#include "src/store/dispatch_store.hpp"
#include "src/util/periodic.hpp"

namespace jq::scheduler {

class Promoter {
 public:
  Promoter(asio::io_context& io, redis::Client& redis, store::DispatchStore& store);
  void start() { loop_.start(); }
  void stop() { loop_.stop(); }
  void on_event(const events::Event& event);

 private:
  asio::awaitable<Periodic::Duration> step();
  asio::awaitable<void> promote_all();
  asio::awaitable<void> wake_constraints();

  redis::Client& redis_;
  store::DispatchStore& store_;
  // 0: look now; both on the loop's strand. An announced due time may be either kind's, so it
  // moves both (the other finds nothing due, one call per shard or one call in all).
  std::int64_t next_due_ms_ = 0;   // the shards' retries
  std::int64_t next_wake_ms_ = 0;  // the constraints' wake_due
  Periodic loop_;
};

}  // namespace jq::scheduler
