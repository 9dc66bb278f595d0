#include "src/scheduler/maintenance.hpp"

#include <spdlog/spdlog.h>

namespace jq::scheduler {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kPeriod{500};
// The beat's pace until this master's clock is set by Redis's.
constexpr milliseconds kUnsynced{50};
constexpr int kReapBatch = 1000;
// A build's script library is deleted once no master has beaten with it for this long: long
// enough that a master that was merely stopped or cut off rarely has to load it again (it would
// on its next call), short enough that a rolling upgrade leaves nothing behind for long.
constexpr std::int64_t kLibraryGraceMs = 10 * 60 * 1000;
constexpr std::int64_t kLibrarySweepEveryMs = 5 * 60 * 1000;
// A clock this far from Redis's is worth a warning: another machine's clock is likely off too
// (workers check signed requests' timestamps against theirs).
constexpr std::chrono::seconds kClockWarning{1};

}  // namespace

Maintenance::Maintenance(asio::io_context& io, redis::Client& redis, const redis::Keys& keys,
                         store::DispatchStore& store, workers::WorkerStore& workers,
                         SharedClock& clock, metrics::Gauge& clock_offset,
                         std::function<void()> on_lapsed)
    : redis_(redis),
      store_(store),
      workers_(workers),
      clock_(clock),
      clock_offset_(clock_offset),
      on_lapsed_(std::move(on_lapsed)),
      libraries_(redis, keys),
      beat_(io.get_executor(), "heartbeat", [this] { return beat(); }),
      loop_(io.get_executor(), "maintenance", [this] { return step(); }) {}

asio::awaitable<Periodic::Duration> Maintenance::beat() {
  // Until the clock is set by Redis's, nothing is dispatched nor reaped: beat again soon.
  const Periodic::Duration again = clock_.synced() ? Periodic::Duration(kPeriod) : kUnsynced;
  if (!redis_.ready()) co_return again;
  const SharedClock::SteadyPoint sent = clock_.steady_now();
  const workers::WorkerStore::Heartbeat beat = co_await workers_.heartbeat();
  if (!beat.recorded) co_return again;
  const bool first = !clock_.synced();
  const std::chrono::microseconds before = clock_.offset();
  if (clock_.observe(sent, beat.redis_us, clock_.steady_now()) &&
      std::chrono::abs(clock_.offset() - before) > kClockWarning) {
    workers_.forget_last_beat();  // the gap to the next beat is the clock's move, not a stall
  }
  show_clock();
  if (beat.lapsed) {
    spdlog::warn(
        "this master's heartbeat had lapsed (it stalled for more than {} s): its worker "
        "slot leases are stated again",
        std::chrono::duration_cast<std::chrono::seconds>(workers::kHeartbeatTtl).count());
    if (on_lapsed_) on_lapsed_();
  }
  // The first beat's expiry was written on this machine's own clock: again on Redis's.
  const bool just_synced = first && clock_.synced();
  co_return just_synced ? Periodic::Duration::zero() : again;
}

void Maintenance::show_clock() {
  const std::chrono::microseconds ahead = clock_.wall_ahead();
  const double seconds = std::chrono::duration<double>(ahead).count();
  clock_offset_.set(seconds);
  const bool far = std::chrono::abs(ahead) >= kClockWarning;
  if (far && !clock_warned_) {
    spdlog::warn(
        "this machine's clock is {:.3f} s {} the clock of Redis: this master keeps job times "
        "(deadlines, retries, schedules, timestamps sent to workers) on Redis's clock; sync "
        "this machine's clock (NTP)",
        std::abs(seconds), seconds > 0 ? "ahead of" : "behind");
  }
  clock_warned_ = far;
}

asio::awaitable<Periodic::Duration> Maintenance::step() {
  if (!redis_.ready()) co_return kPeriod;
  co_await workers_.flush_outcomes();
  // Expiries and deadlines are compared on the clock the beats set.
  if (!clock_.synced()) co_return kPeriod;
  co_await workers_.expire();
  // Every shard in one round trip: on a cluster a node down holds up only its own shards.
  const std::int64_t cutoff = store_.now_ms() - store::kReapGraceMs;
  const std::vector<Expected<int, store::StoreError>> reaped =
      co_await store_.reap_all(cutoff, kReapBatch);
  for (std::size_t shard = 0; shard < reaped.size(); ++shard) {
    if (reaped[shard] && *reaped[shard] > 0) {
      spdlog::warn("recovered {} in-flight jobs of shard {} past their deadline", *reaped[shard],
                   shard);
    }
  }
  // After the heartbeat: this master's own library is recorded before anything is deleted.
  const std::int64_t now = store_.now_ms();
  if (now >= next_library_sweep_ms_) {
    next_library_sweep_ms_ = now + kLibrarySweepEveryMs;
    co_await libraries_.sweep(now - kLibraryGraceMs);
  }
  co_return kPeriod;
}

}  // namespace jq::scheduler
