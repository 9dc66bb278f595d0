// Moves retries whose backoff has passed into their ready queues. It sleeps until the earliest
// due time it knows of; a retry scheduled by any master ("s <due>") wakes it if earlier.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include <boost/asio/io_context.hpp>

#include "src/events/event.hpp"
#include "src/redis/client.hpp"
#include "src/scheduler/wakeup.hpp"
#include "src/store/dispatch_store.hpp"

namespace jq::scheduler {

class Promoter {
 public:
  Promoter(asio::io_context& io, redis::Client& redis, store::DispatchStore& store);
  void start();
  void stop();
  void on_event(const events::Event& event);

 private:
  asio::awaitable<void> run();

  asio::strand<asio::any_io_executor> strand_;
  redis::Client& redis_;
  store::DispatchStore& store_;
  Wakeup wakeup_;
  bool stopping_ = false;
  std::int64_t next_due_ms_ = 0;  // 0: look now
};

}  // namespace jq::scheduler
