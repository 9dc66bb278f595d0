// lua/wakeConstraints-2.lua: lets jobs held back by constraints try again (a rate came due, or a
// constraint changed).
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct WakeConstraints {
  static constexpr ScriptId id = ScriptId::wake_constraints;
  static constexpr std::array<std::string_view, 2> key_names = {"constraint_defs",
                                                                "constraint_state"};
  static constexpr std::array<std::string_view, 5> arg_names = {"now_ms", "key_prefix", "channel",
                                                                "what", "max"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string constraint_defs, constraint_state;
    std::string key_prefix, channel;  // not keys: ARGV
  };
  struct Args {
    std::int64_t now_ms = 0;
    std::string what;  // "": the keys whose rate is due; else a constraint's name
    std::int64_t max = 0;
  };
  struct Woken {
    std::int64_t woken = 0;
    std::int64_t next = 0;  // "": the earliest due time left (-1 none); a name: still held
  };

  static Keys keys(const redis::Keys& k) {
    return {k.constraints(), k.constraint_state_prefix(), k.prefix(), k.constraint_channel()};
  }
  static ScriptCall call(Keys k, Args a) {
    return {id,
            {std::move(k.constraint_defs), std::move(k.constraint_state)},
            {arg(a.now_ms), std::move(k.key_prefix), std::move(k.channel), std::move(a.what),
             arg(a.max)}};
  }
  static Decoded<Woken> decode(const Reply& reply) {
    auto n = integers_reply(id, reply);
    if (!n) return unexpected(std::move(n.error()));
    if (n->size() != 2) return unexpected(bad_reply(id, "not {woken, next}", reply));
    return Woken{(*n)[0], (*n)[1]};
  }
};

}  // namespace jq::redis::bindings
