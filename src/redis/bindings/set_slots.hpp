// lua/setSlots-2.lua: a master states how many of a worker's slots it holds.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct SetSlots {
  static constexpr ScriptId id = ScriptId::set_slots;
  static constexpr std::array<std::string_view, 2> key_names = {"slots", "masters"};
  static constexpr std::array<std::string_view, 4> arg_names = {"master", "slots", "now_ms",
                                                                "heartbeat_ttl_ms"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string slots, masters;
  };
  struct Args {
    std::string master;  // the calling master's id
    std::int64_t slots = 0;
    std::int64_t now_ms = 0;
    std::int64_t heartbeat_ttl_ms = 0;
  };

  static Keys keys(const redis::Keys& k, std::string_view worker_id) {
    return {k.worker_slots(worker_id), k.masters()};
  }
  static ScriptCall call(Keys k, Args a) {
    return {id,
            {std::move(k.slots), std::move(k.masters)},
            {std::move(a.master), arg(a.slots), arg(a.now_ms), arg(a.heartbeat_ttl_ms)}};
  }
  // The slots the master holds now.
  static Decoded<std::int64_t> decode(const Reply& reply) { return integer_reply(id, reply); }
};

}  // namespace jq::redis::bindings
