#pragma once

#include <boost/asio/io_context.hpp>

#include "src/redis/client.hpp"
#include "src/store/dispatch_store.hpp"
#include "src/util/periodic.hpp"
#include "src/workers/worker_store.hpp"

namespace jq::scheduler {

// Periodic upkeep on every master: recover in-flight jobs whose deadline passed long ago (their
// master died), lapse worker registrations whose heartbeat stopped, and beat this master's own
// heartbeat (slot leases of silent masters are freed).
class Maintenance {
 public:
  Maintenance(asio::io_context& io, redis::Client& redis, store::DispatchStore& store,
              workers::WorkerStore& workers);
  void start() { loop_.start(); }
  void stop() { loop_.stop(); }

 private:
  asio::awaitable<Periodic::Duration> step();

  redis::Client& redis_;
  store::DispatchStore& store_;
  workers::WorkerStore& workers_;
  Periodic loop_;
};

}  // namespace jq::scheduler
