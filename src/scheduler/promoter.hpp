// Moves retries whose backoff has passed into their ready queues. It sleeps until the earliest
// due time it knows of; a retry scheduled by any master ("s <due>") wakes it if earlier.
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

  redis::Client& redis_;
  store::DispatchStore& store_;
  std::int64_t next_due_ms_ = 0;  // 0: look now; on the loop's strand
  Periodic loop_;
};

}  // namespace jq::scheduler
