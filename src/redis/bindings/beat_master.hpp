// lua/beatMaster-2.lua: a master renews its heartbeat and its script library's (also while Redis
// is over maxmemory).
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct BeatMaster {
  static constexpr ScriptId id = ScriptId::beat_master;
  static constexpr std::array<std::string_view, 2> key_names = {"masters", "libraries"};
  static constexpr std::array<std::string_view, 3> arg_names = {"master", "expiry_ms", "library"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string masters;
    std::string libraries;
  };
  struct Args {
    std::string master;  // the master's id
    std::int64_t expiry_ms = 0;
    std::string library;  // its build's script library (redis::library_name())
  };

  static Keys keys(const redis::Keys& k) { return {k.masters(), k.libraries()}; }
  static ScriptCall call(Keys k, Args a) {
    return {id,
            {std::move(k.masters), std::move(k.libraries)},
            {std::move(a.master), arg(a.expiry_ms), std::move(a.library)}};
  }
  // The heartbeat expiry before this one (ms), 0 when there was none.
  static Decoded<std::int64_t> decode(const Reply& reply) { return integer_reply(id, reply); }
};

}  // namespace jq::redis::bindings
