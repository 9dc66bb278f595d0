#include "src/scheduler/maintenance.hpp"

#include <spdlog/spdlog.h>

namespace jq::scheduler {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kPeriod{500};
constexpr int kReapBatch = 1000;
// A build's script library is deleted once no master has beaten with it for this long: long
// enough that a master that was merely stopped or cut off rarely has to load it again (it would
// on its next call), short enough that a rolling upgrade leaves nothing behind for long.
constexpr std::int64_t kLibraryGraceMs = 10 * 60 * 1000;
constexpr std::int64_t kLibrarySweepEveryMs = 5 * 60 * 1000;

}  // namespace

Maintenance::Maintenance(asio::io_context& io, redis::Client& redis, const redis::Keys& keys,
                         store::DispatchStore& store, workers::WorkerStore& workers,
                         std::function<void()> on_lapsed)
    : redis_(redis),
      store_(store),
      workers_(workers),
      on_lapsed_(std::move(on_lapsed)),
      libraries_(redis, keys),
      beat_(io.get_executor(), "heartbeat", [this] { return beat(); }),
      loop_(io.get_executor(), "maintenance", [this] { return step(); }) {}

asio::awaitable<Periodic::Duration> Maintenance::beat() {
  if (!redis_.ready()) co_return kPeriod;
  const bool lapsed = co_await workers_.heartbeat();  // not in the if: g++ 12 traps there
  if (lapsed) {
    spdlog::warn(
        "this master's heartbeat had lapsed (it stalled for more than {} s): its worker "
        "slot leases are stated again",
        std::chrono::duration_cast<std::chrono::seconds>(workers::kHeartbeatTtl).count());
    if (on_lapsed_) on_lapsed_();
  }
  beaten_ = true;
  co_return kPeriod;
}

asio::awaitable<Periodic::Duration> Maintenance::step() {
  if (!redis_.ready()) co_return kPeriod;
  co_await workers_.flush_outcomes();
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
  if (beaten_ && now >= next_library_sweep_ms_) {
    next_library_sweep_ms_ = now + kLibrarySweepEveryMs;
    co_await libraries_.sweep(now - kLibraryGraceMs);
  }
  co_return kPeriod;
}

}  // namespace jq::scheduler
