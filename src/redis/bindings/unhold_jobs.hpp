// lua/unholdJobs-3.lua: a wake order run in its shard: up to n of a pair's held jobs there
// become ready again, oldest first.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/bindings/wake_orders.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct UnholdJobs {
  static constexpr ScriptId id = ScriptId::unhold_jobs;
  static constexpr std::array<std::string_view, 3> key_names = {"jobs", "ready_prefix",
                                                                "held_prefix"};
  static constexpr std::array<std::string_view, 6> arg_names = {"channel", "shard", "name",
                                                                "key",     "n",     "bound"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string jobs, ready_prefix, held_prefix;
    std::string channel;  // not a key: ARGV
    std::int64_t shard = 0;
  };
  using Args = WakeOrder;  // its shard is the one of the keys
  struct Unheld {
    std::int64_t woken = 0;
    std::int64_t oldest = -1;  // the oldest ready stamp still held there (µs); -1: none
    std::int64_t settled = 0;  // refused jobs settled there since the pair's last wake
    std::int64_t at = 0;       // when it ran (µs, the shard node's clock): orders the acks
  };

  static Keys keys(const redis::Keys& k, int shard) {
    return {k.jobs_prefix(shard), k.ready_prefix(shard), k.held_prefix(shard),
            k.events_channel(shard), shard};
  }
  static ScriptCall call(Keys k, Args a) {
    return {id,
            {std::move(k.jobs), std::move(k.ready_prefix), std::move(k.held_prefix)},
            {std::move(k.channel), arg(k.shard), std::move(a.constraint), std::move(a.key),
             arg(a.n), arg(a.bound)}};
  }
  static Decoded<Unheld> decode(const Reply& reply) {
    auto n = integers_reply(id, reply, 4);
    if (!n) return unexpected(std::move(n.error()));
    return Unheld{(*n)[0], (*n)[1], (*n)[2], (*n)[3]};
  }
};

}  // namespace jq::redis::bindings
