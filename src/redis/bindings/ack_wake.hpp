// lua/ackWake-2.lua: what a wake order found in its shard, back under {c}; more orders for what
// it could not use.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/bindings/wake_orders.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct AckWake {
  static constexpr ScriptId id = ScriptId::ack_wake;
  static constexpr std::array<std::string_view, 2> key_names = {"constraint_defs",
                                                                "constraint_state"};
  static constexpr std::array<std::string_view, 10> arg_names = {
      "now_ms", "name", "key", "shard", "n", "woken", "oldest", "settled", "at", "channel"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string constraint_defs, constraint_state;
    std::string channel;  // not a key: ARGV
  };
  struct Args {
    std::int64_t now_ms = 0;
    WakeOrder order;
    std::int64_t woken = 0;
    std::int64_t oldest = -1;
    std::int64_t settled = 0;
    std::int64_t at = 0;  // UnholdJobs::Unheld::at
  };

  static Keys keys(const redis::Keys& k) {
    return {k.constraints(), k.constraint_state_prefix(), k.constraint_channel()};
  }
  static ScriptCall call(Keys k, Args a) {
    return {id,
            {std::move(k.constraint_defs), std::move(k.constraint_state)},
            {arg(a.now_ms), std::move(a.order.constraint), std::move(a.order.key),
             arg(a.order.shard), arg(a.order.n), arg(a.woken), arg(a.oldest), arg(a.settled),
             arg(a.at), std::move(k.channel)}};
  }
  static Decoded<std::vector<WakeOrder>> decode(Reply reply) {
    if (!reply.is_array()) return unexpected(bad_reply(id, "not an array", reply));
    return wake_orders(id, reply.elements, 0, reply);
  }
};

}  // namespace jq::redis::bindings
