// lua/releaseLeases-5.lua: ended attempts' leases go; the slots they free are handed to held
// jobs (wake orders, or in the same step on one Redis).
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/bindings/wake_orders.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct ReleaseLeases {
  static constexpr ScriptId id = ScriptId::release_leases;
  static constexpr std::array<std::string_view, 5> key_names = {
      "constraint_defs", "constraint_state", "jobs_prefix", "ready_prefix", "held_prefix"};
  // The last three (shard 0's, naming every shard's): the orders run in this step.
  static constexpr std::size_t optional_keys = 3;
  static constexpr std::array<std::string_view, 3> arg_names = {"now_ms", "channel",
                                                                "constraint_channel"};
  static constexpr std::size_t args_per_item = 3;  // then three per job (Lease)

  struct Keys {
    std::string constraint_defs, constraint_state;
    // On a cluster only the constraint channel (the shards are in other slots): the orders come
    // back.
    RunWakesHere here;
  };
  struct Lease {
    std::string lease;        // "<shard>-<field>:<attempt>", as admitJobs took it
    std::string constraints;  // MessagePack [name1, key1, ...]
    bool unsent = false;      // never sent: its rate steps are given back
  };
  struct Args {
    std::int64_t now_ms = 0;
    std::vector<Lease> leases;
  };

  static Keys keys(const redis::Keys& k) {
    RunWakesHere announce_only;  // the {c} channel is in the script's slot
    announce_only.constraint_channel = k.constraint_channel();
    return {k.constraints(), k.constraint_state_prefix(), std::move(announce_only)};
  }
  // With shard 0's keys too, so the wake orders run in this step (one Redis only).
  static Keys joined_keys(const redis::Keys& k) {
    return {k.constraints(), k.constraint_state_prefix(), RunWakesHere::of(k)};
  }
  static ScriptCall call(Keys k, Args a) {
    ScriptCall c{id,
                 {std::move(k.constraint_defs), std::move(k.constraint_state)},
                 {arg(a.now_ms), std::move(k.here.channel), std::move(k.here.constraint_channel)}};
    k.here.append_keys(c.keys);
    c.args.reserve(arg_names.size() + a.leases.size() * args_per_item);
    for (Lease& l : a.leases) {
      c.args.push_back(std::move(l.lease));
      c.args.push_back(std::move(l.constraints));
      c.args.push_back(l.unsent ? "1" : "0");
    }
    return c;
  }
  // No orders when the call ran them.
  static Decoded<std::vector<WakeOrder>> decode(Reply reply) {
    if (!reply.is_array()) return unexpected(bad_reply(id, "not an array", reply));
    return wake_orders(id, reply.elements, 0, reply);
  }
};

}  // namespace jq::redis::bindings
