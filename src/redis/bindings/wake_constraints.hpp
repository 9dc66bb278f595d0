// lua/wakeConstraints-5.lua: the pairs whose time to look again came (wake_due): wake orders
// for their held jobs that may start now (or those run in the same step on one Redis), and the
// next due time.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/bindings/wake_orders.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct WakeConstraints {
  static constexpr ScriptId id = ScriptId::wake_constraints;
  static constexpr std::array<std::string_view, 5> key_names = {
      "constraint_defs", "constraint_state", "jobs_prefix", "ready_prefix", "held_prefix"};
  // The last three (shard 0's, naming every shard's): the orders run in this step.
  static constexpr std::size_t optional_keys = 3;
  static constexpr std::array<std::string_view, 4> arg_names = {"now_ms", "max", "channel",
                                                                "constraint_channel"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string constraint_defs, constraint_state;
    RunWakesHere here;  // empty on a cluster (the shards are in other slots): the orders come back
  };
  struct Args {
    std::int64_t now_ms = 0;
    std::int64_t max = 0;  // the most pairs to look at
  };
  struct Due {
    std::int64_t next_due_ms = -1;  // -1: nothing left due
    std::vector<WakeOrder> orders;  // none when the call ran them
  };

  static Keys keys(const redis::Keys& k) {
    return {k.constraints(), k.constraint_state_prefix(), {}};
  }
  // With shard 0's keys too, so the wake orders run in this step (one Redis only).
  static Keys joined_keys(const redis::Keys& k) {
    return {k.constraints(), k.constraint_state_prefix(), RunWakesHere::of(k)};
  }
  static ScriptCall call(Keys k, Args a) {
    ScriptCall c{id,
                 {std::move(k.constraint_defs), std::move(k.constraint_state)},
                 {arg(a.now_ms), arg(a.max), std::move(k.here.channel),
                  std::move(k.here.constraint_channel)}};
    k.here.append_keys(c.keys);
    return c;
  }
  static Decoded<Due> decode(Reply reply) {
    if (!reply.is_array() || reply.elements.empty() || !reply.elements[0].is_integer()) {
      return unexpected(bad_reply(id, "not {next_due, orders...}", reply));
    }
    Due out{reply.elements[0].integer, {}};
    auto orders = wake_orders(id, reply.elements, 1, reply);
    if (!orders) return unexpected(std::move(orders.error()));
    out.orders = std::move(*orders);
    return out;
  }
};

}  // namespace jq::redis::bindings
