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
  struct Beat {
    std::int64_t before_ms = 0;  // the heartbeat expiry before this one, 0 when there was none
    std::int64_t redis_us = 0;   // Redis's clock as it recorded the beat (µs since the epoch)
  };
  static Decoded<Beat> decode(const Reply& reply) {
    auto values = integers_reply(id, reply, 2);
    if (!values) return unexpected(std::move(values.error()));
    return Beat{(*values)[0], (*values)[1]};
  }
};

}  // namespace jq::redis::bindings
