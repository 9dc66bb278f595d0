#pragma once

#include <atomic>
#include <functional>

#include <boost/asio/io_context.hpp>

#include "src/metrics/registry.hpp"
#include "src/redis/client.hpp"
#include "src/store/dispatch_store.hpp"
#include "src/store/script_libraries.hpp"
#include "src/util/periodic.hpp"
#include "src/util/shared_clock.hpp"
#include "src/workers/worker_store.hpp"

namespace jq::scheduler {

// Periodic upkeep on every master: recover in-flight jobs whose deadline passed long ago (their
// master died), lapse worker registrations whose heartbeat stopped, and beat this master's own
// heartbeat (slot leases of silent masters are freed) and set this master's clock by Redis's with
// it (`clock`, whose offset `clock_offset` shows); now and then, delete the script library of a
// build no master has run for a while.
class Maintenance {
 public:
  // `on_lapsed`: this master's heartbeat had lapsed (it stalled): its slot leases are to be
  // stated again (Scheduler::leases_unsure).
  Maintenance(asio::io_context& io, redis::Client& redis, const redis::Keys& keys,
              store::DispatchStore& store, workers::WorkerStore& workers, SharedClock& clock,
              metrics::Gauge& clock_offset, std::function<void()> on_lapsed);
  void start() {
    beat_.start();
    loop_.start();
  }
  void stop() {
    beat_.stop();
    loop_.stop();
  }

 private:
  // The heartbeat has its own loop: the upkeep's calls to every shard may each wait out the
  // cluster client's retries while a node is down (seconds apiece), longer together than the
  // heartbeat's ttl, and other masters would then drop this one's slot leases.
  asio::awaitable<Periodic::Duration> beat();
  asio::awaitable<Periodic::Duration> step();
  // jq_clock_offset_seconds, and a warning when this machine's clock is far from Redis's.
  void show_clock();

  redis::Client& redis_;
  store::DispatchStore& store_;
  workers::WorkerStore& workers_;
  SharedClock& clock_;
  metrics::Gauge& clock_offset_;
  std::function<void()> on_lapsed_;
  store::ScriptLibraries libraries_;
  // The first step after the first beat sweeps (steps wait for the clock, which the first
  // recorded beat sets: this master's library is recorded before anything is deleted).
  std::int64_t next_library_sweep_ms_ = 0;
  bool clock_warned_ = false;  // on the beat's strand
  Periodic beat_;
  Periodic loop_;
};

}  // namespace jq::scheduler
