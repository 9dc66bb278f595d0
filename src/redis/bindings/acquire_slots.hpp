// lua/acquireSlots-2.lua: a master asks for up to `want` of a worker's concurrency slots.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct AcquireSlots {
  static constexpr ScriptId id = ScriptId::acquire_slots;
  static constexpr std::array<std::string_view, 2> key_names = {"slots", "masters"};
  static constexpr std::array<std::string_view, 5> arg_names = {"master", "want", "concurrency",
                                                                "now_ms", "heartbeat_ttl_ms"};
  static constexpr std::size_t args_per_item = 0;
  static constexpr std::size_t optional_args = 1;  // the last: the heartbeat ttl

  struct Keys {
    std::string slots, masters;
  };
  struct Args {
    std::string master;  // the calling master's id
    std::int64_t want = 0;
    std::int64_t concurrency = 0;
    std::int64_t now_ms = 0;
    std::optional<std::int64_t> heartbeat_ttl_ms;  // renews the caller's heartbeat first
  };

  static Keys keys(const redis::Keys& k, std::string_view worker_id) {
    return {k.worker_slots(worker_id), k.masters()};
  }
  static ScriptCall call(Keys k, Args a) {
    ScriptCall c{id,
                 {std::move(k.slots), std::move(k.masters)},
                 {std::move(a.master), arg(a.want), arg(a.concurrency), arg(a.now_ms)}};
    if (a.heartbeat_ttl_ms) c.args.push_back(arg(*a.heartbeat_ttl_ms));
    return c;
  }
  // The slots granted.
  static Decoded<std::int64_t> decode(const Reply& reply) { return integer_reply(id, reply); }
};

}  // namespace jq::redis::bindings
