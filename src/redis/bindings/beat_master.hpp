// lua/beatMaster-1.lua: a master renews its heartbeat (also while Redis is over maxmemory).
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct BeatMaster {
  static constexpr ScriptId id = ScriptId::beat_master;
  static constexpr std::array<std::string_view, 1> key_names = {"masters"};
  static constexpr std::array<std::string_view, 2> arg_names = {"master", "expiry_ms"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string masters;
  };
  struct Args {
    std::string master;  // the master's id
    std::int64_t expiry_ms = 0;
  };

  static Keys keys(const redis::Keys& k) { return {k.masters()}; }
  static ScriptCall call(Keys k, Args a) {
    return {id, {std::move(k.masters)}, {std::move(a.master), arg(a.expiry_ms)}};
  }
  static Decoded<std::int64_t> decode(const Reply& reply) { return integer_reply(id, reply); }
};

}  // namespace jq::redis::bindings
