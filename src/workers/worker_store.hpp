// Worker registrations, their shared counters, and the slot leases that keep an endpoint's
// concurrency across all masters. Everything lives in the {w} slot of Redis.
#pragma once

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "api/worker_registration.hpp"
#include "src/redis/bindings/update_worker_stats.hpp"
#include "src/redis/client.hpp"
#include "src/redis/keys.hpp"
#include "src/store/store_error.hpp"
#include "src/util/log_every.hpp"
#include "src/util/shared_clock.hpp"
#include "src/util/time.hpp"
#include "src/workers/endpoint.hpp"

namespace jq::workers {

namespace asio = boost::asio;
using store::StoreError;

// Beaten every half second by Maintenance (and on every slot acquisition), so a master that
// dies frees its slots within this time.
inline constexpr std::chrono::milliseconds kHeartbeatTtl{5000};

struct Registered {
  std::string id;
  bool created = false;
};

class WorkerStore {
 public:
  WorkerStore(redis::Client& redis, redis::Keys keys, SystemClock clock, std::string master_id);

  asio::awaitable<Expected<Registered, StoreError>> add(api::WorkerRegistration registration);
  asio::awaitable<Expected<void, StoreError>> remove(std::string id);
  asio::awaitable<Expected<std::vector<Endpoint>, StoreError>> load_all();
  // Every live registration with its shared counters and health (two round trips).
  asio::awaitable<Expected<std::vector<EndpointView>, StoreError>> load_with_stats();

  // Slots of an endpoint's concurrency held by this master; grants at most `want`.
  asio::awaitable<Expected<int, StoreError>> acquire(std::string id, int want, int concurrency);
  asio::awaitable<Expected<void, StoreError>> release(std::string id, int n);
  // This master holds `n` slots of the endpoint, said as a number (setSlots): what puts the
  // holding right when an acquire's or a release's answer was lost.
  asio::awaitable<Expected<void, StoreError>> set_slots(std::string id, int n);
  // Counters after an attempt; `error` non-empty becomes last_error. Added up in memory (any
  // thread) and written by flush_outcomes, so a finished attempt costs no Redis round trip.
  void record_outcome(const std::string& id, bool succeeded, std::string error);
  // Writes the counters recorded since the last flush (Maintenance does every half second, and
  // load_with_stats before it reads them).
  asio::awaitable<void> flush_outcomes();
  // Held off until `until_ms` (0: healthy again); a non-empty `error` becomes last_error.
  asio::awaitable<void> mark_down(std::string id, std::int64_t until_ms, std::string error);
  // Held back by a busy answer until `until_ms`: shown as busy_until (every master sees it).
  asio::awaitable<void> mark_busy(std::string id, std::int64_t until_ms);
  // This master is alive until now + kHeartbeatTtl; slots of masters that stopped beating are
  // freed by the others.
  struct Heartbeat {
    bool recorded = false;  // Redis took it (else Redis was away: nothing below is known)
    // This master's previous heartbeat had lapsed before this one (a stall longer than
    // kHeartbeatTtl): other masters may have dropped its slot holdings meanwhile.
    bool lapsed = false;
    std::int64_t redis_us = 0;  // Redis's clock as it recorded the beat (µs since the epoch)
  };
  asio::awaitable<Heartbeat> heartbeat();
  // This master's clock moved far (SharedClock): the next beat's gap from the last is no stall.
  void forget_last_beat() { last_beat_ms_ = 0; }
  // No slot is granted before `clock` is set by Redis's: the holdings' expiry and the deadlines
  // of the attempts they start would be on this machine's own clock (null: always granted).
  void wait_for_clock(const SharedClock* clock) { shared_clock_ = clock; }
  asio::awaitable<void> expire();

 private:
  // updateWorkerStats: counts and marks of the workers still registered.
  asio::awaitable<redis::ReplyResult> update_stats(
      std::vector<redis::bindings::UpdateWorkerStats::Worker> workers);
  std::int64_t now_ms() const;
  void drop_outcomes(const std::string& id);
  asio::awaitable<Expected<std::vector<EndpointStats>, StoreError>> stats(
      std::vector<std::string> ids);

  struct Outcomes {
    std::int64_t succeeded = 0;
    std::int64_t failed = 0;
    std::string last_error;
  };

  redis::Client& redis_;
  redis::Keys keys_;
  SystemClock clock_;
  std::string master_id_;
  const SharedClock* shared_clock_ = nullptr;
  std::int64_t last_beat_ms_ = 0;  // when the maintenance loop's last heartbeat went through
  std::mutex outcomes_mutex_;
  std::unordered_map<std::string, Outcomes> outcomes_;  // by endpoint id, since the last flush
  LogEvery flush_failures_{std::chrono::minutes(1)};
};

}  // namespace jq::workers
