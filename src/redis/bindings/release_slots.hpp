// lua/releaseSlots-1.lua: a master gives back worker slots it held.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct ReleaseSlots {
  static constexpr ScriptId id = ScriptId::release_slots;
  static constexpr std::array<std::string_view, 1> key_names = {"slots"};
  static constexpr std::array<std::string_view, 2> arg_names = {"master", "slots"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string slots;
  };
  struct Args {
    std::string master;  // the master's id
    std::int64_t slots = 0;
  };

  static Keys keys(const redis::Keys& k, std::string_view worker_id) {
    return {k.worker_slots(worker_id)};
  }
  static ScriptCall call(Keys k, Args a) {
    return {id, {std::move(k.slots)}, {std::move(a.master), arg(a.slots)}};
  }
  // The slots the master still holds.
  static Decoded<std::int64_t> decode(const Reply& reply) { return integer_reply(id, reply); }
};

}  // namespace jq::redis::bindings
