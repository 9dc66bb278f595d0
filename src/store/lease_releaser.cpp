#include "src/store/lease_releaser.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

#include "src/redis/bindings/release_leases.hpp"
#include "src/redis/errc.hpp"

namespace jq::store {

using redis::bindings::ReleaseLeases;

namespace {
constexpr std::size_t kMaxBatch = 512;  // leases per releaseLeases call
}  // namespace

LeaseReleaser::LeaseReleaser(redis::Client& redis, const redis::Keys& keys, Handoff& handoff,
                             SystemClock clock)
    : redis_(redis),
      keys_(keys),
      handoff_(handoff),
      clock_(std::move(clock)),
      strand_(asio::make_strand(redis.executor())) {}

void LeaseReleaser::release(std::vector<AttemptLease> leases) {
  if (leases.empty()) return;
  asio::post(strand_, [this, leases = std::move(leases)]() mutable {
    pending_.insert(pending_.end(), std::make_move_iterator(leases.begin()),
                    std::make_move_iterator(leases.end()));
    if (std::exchange(flushing_, true)) return;  // the running flush takes them next
    asio::co_spawn(strand_, flush(), [this](std::exception_ptr e) {
      if (e) flushing_ = false;  // the next release flushes again; these stop at their deadline
    });
  });
}

asio::awaitable<void> LeaseReleaser::flush() {
  while (!pending_.empty()) {
    std::vector<AttemptLease> batch;
    if (pending_.size() <= kMaxBatch) {
      batch.swap(pending_);
    } else {
      batch.assign(std::make_move_iterator(pending_.begin()),
                   std::make_move_iterator(pending_.begin() + kMaxBatch));
      pending_.erase(pending_.begin(), pending_.begin() + kMaxBatch);
    }
    const LeaseRelease done = co_await send(std::move(batch));
    if (done != LeaseRelease::released) {
      spdlog::warn("constraint leases not released; they stop counting at their deadlines");
    }
  }
  flushing_ = false;  // here, not in the completion: a release arriving between the two would wait
}

asio::awaitable<LeaseRelease> LeaseReleaser::release_now(AttemptLease lease) {
  std::vector<AttemptLease> one;
  one.push_back(std::move(lease));
  co_return co_await send(std::move(one));
}

asio::awaitable<LeaseRelease> LeaseReleaser::send(std::vector<AttemptLease> leases) {
  ReleaseLeases::Args args{epoch_ms(clock_()), {}};
  args.leases.reserve(leases.size());
  for (AttemptLease& l : leases) {
    args.leases.push_back({std::move(l.lease), std::move(l.constraints), l.unsent});
  }
  redis::ScriptCall call = ReleaseLeases::call(
      handoff_.joined() ? ReleaseLeases::joined_keys(keys_) : ReleaseLeases::keys(keys_),
      std::move(args));
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) {
    spdlog::debug("releasing constraint leases: {}", reply.error().message());
    co_return redis::may_have_run(reply.error()) ? LeaseRelease::unsure : LeaseRelease::refused;
  }
  auto orders = ReleaseLeases::decode(std::move(*reply));
  if (!orders) {  // an error a proxy made up, say: the call may still reach Redis
    spdlog::warn("releasing constraint leases: {}", orders.error().message());
    co_return LeaseRelease::unsure;
  }
  handoff_.start(std::move(*orders));
  co_return LeaseRelease::released;
}

}  // namespace jq::store
