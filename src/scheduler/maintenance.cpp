#include "src/scheduler/maintenance.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

namespace jq::scheduler {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kPeriod{500};
// How long past its deadline an attempt may still be reported by the master that sent it;
// after that any master treats it as timed out (its master is presumed dead).
constexpr std::int64_t kReapGraceMs = 2000;
constexpr int kReapBatch = 1000;

}  // namespace

Maintenance::Maintenance(asio::io_context& io, redis::Client& redis, store::DispatchStore& store,
                         workers::WorkerStore& workers)
    : strand_(asio::make_strand(io.get_executor())),
      redis_(redis),
      store_(store),
      workers_(workers),
      wakeup_(strand_) {}

void Maintenance::start() {
  asio::co_spawn(strand_, run(), asio::detached);
}

void Maintenance::stop() {
  asio::post(strand_, [this] { stopping_ = true; });
  wakeup_.notify();
}

asio::awaitable<void> Maintenance::run() {
  while (!stopping_) {
    if (redis_.ready()) {
      co_await workers_.heartbeat();
      co_await workers_.flush_outcomes();
      co_await workers_.expire();
      const std::int64_t cutoff = store_.now_ms() - kReapGraceMs;
      for (int shard = 0; shard < store_.shards(); ++shard) {
        auto reaped = co_await store_.reap(shard, cutoff, kReapBatch);
        if (reaped && *reaped > 0) {
          spdlog::warn("recovered {} in-flight jobs of shard {} past their deadline", *reaped,
                       shard);
        }
      }
    }
    co_await wakeup_.wait(kPeriod);
  }
}

}  // namespace jq::scheduler
