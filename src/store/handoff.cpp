#include "src/store/handoff.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "src/redis/bindings/ack_wake.hpp"
#include "src/redis/bindings/unhold_jobs.hpp"
#include "src/redis/bindings/wake_constraints.hpp"

namespace jq::store {

using redis::ScriptCall;
using redis::bindings::AckWake;
using redis::bindings::UnholdJobs;
using redis::bindings::WakeConstraints;

Handoff::Handoff(redis::Client& redis, redis::Keys keys, int shards, SystemClock clock,
                 std::function<bool()> joined)
    : redis_(redis),
      keys_(std::move(keys)),
      shards_(shards),
      clock_(std::move(clock)),
      joined_(std::move(joined)) {}

// Each round: every order's unholdJobs in one pipeline (each in its own shard), then every
// ackWake in another (all under {c}); the acks' orders make the next round. Each round wakes
// jobs or moves on to later shards, so it ends.
asio::awaitable<void> Handoff::run(std::vector<WakeOrder> orders) {
  while (!orders.empty()) {
    std::erase_if(orders, [this](const WakeOrder& o) { return o.shard < 0 || o.shard >= shards_; });
    if (orders.empty()) co_return;
    std::vector<ScriptCall> unholds;
    unholds.reserve(orders.size());
    for (const WakeOrder& o : orders) {
      unholds.push_back(UnholdJobs::call(UnholdJobs::keys(keys_, static_cast<int>(o.shard)), o));
    }
    auto unheld = co_await redis_.eval_pipeline(std::move(unholds));
    if (!unheld || !unheld->is_array() || unheld->elements.size() != orders.size()) {
      spdlog::warn("waking jobs held by constraints failed ({}); they wake when their pair is due",
                   unheld ? "unexpected reply" : unheld.error().message());
      co_return;
    }
    std::vector<ScriptCall> acks;
    acks.reserve(orders.size());
    const std::int64_t now = now_ms();
    for (std::size_t i = 0; i < orders.size(); ++i) {
      auto found = UnholdJobs::decode(unheld->elements[i]);
      if (!found) {
        spdlog::warn("waking jobs held by constraints: {}", found.error().message());
        continue;
      }
      acks.push_back(AckWake::call(
          AckWake::keys(keys_),
          {now, std::move(orders[i]), found->woken, found->oldest, found->settled, found->at}));
    }
    orders.clear();
    if (acks.empty()) co_return;
    const std::size_t sent = acks.size();
    auto acked = co_await redis_.eval_pipeline(std::move(acks));
    if (!acked || !acked->is_array() || acked->elements.size() != sent) {
      spdlog::warn("acknowledging woken jobs failed ({}); their pairs are looked at again later",
                   acked ? "unexpected reply" : acked.error().message());
      co_return;
    }
    for (redis::Reply& reply : acked->elements) {
      auto more = AckWake::decode(std::move(reply));
      if (!more) {
        spdlog::warn("acknowledging woken jobs: {}", more.error().message());
        continue;
      }
      orders.insert(orders.end(), std::make_move_iterator(more->begin()),
                    std::make_move_iterator(more->end()));
    }
  }
}

void Handoff::start(std::vector<WakeOrder> orders) {
  if (orders.empty()) return;
  asio::co_spawn(redis_.executor(), run(std::move(orders)), asio::detached);
}

asio::awaitable<Expected<std::optional<std::int64_t>, StoreError>> Handoff::wake_due(
    int max_pairs) {
  for (;;) {
    const std::int64_t now = now_ms();
    ScriptCall call = WakeConstraints::call(
        joined_() ? WakeConstraints::joined_keys(keys_) : WakeConstraints::keys(keys_),
        {now, max_pairs});
    auto reply = co_await redis_.eval(std::move(call));
    if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
    auto due = WakeConstraints::decode(std::move(*reply));
    if (!due) co_return unexpected(StoreError::bad_reply(due.error()));
    co_await run(std::move(due->orders));
    if (due->next_due_ms < 0) co_return std::optional<std::int64_t>();
    if (due->next_due_ms > now) co_return std::optional<std::int64_t>(due->next_due_ms);
  }
}

}  // namespace jq::store
