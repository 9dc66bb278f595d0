#pragma once

#include <boost/asio/io_context.hpp>

#include "src/redis/client.hpp"
#include "src/scheduler/wakeup.hpp"
#include "src/store/dispatch_store.hpp"
#include "src/workers/worker_store.hpp"

namespace jq::scheduler {

// Periodic upkeep on every master: recover in-flight jobs whose deadline passed long ago (their
// master died), lapse worker registrations whose heartbeat stopped, and beat this master's own
// heartbeat (slot leases of silent masters are freed).
class Maintenance {
 public:
  Maintenance(asio::io_context& io, redis::Client& redis, store::DispatchStore& store,
              workers::WorkerStore& workers);
  void start();
  void stop();

 private:
  asio::awaitable<void> run();

  asio::strand<asio::any_io_executor> strand_;
  redis::Client& redis_;
  store::DispatchStore& store_;
  workers::WorkerStore& workers_;
  Wakeup wakeup_;
  bool stopping_ = false;
};

}  // namespace jq::scheduler
