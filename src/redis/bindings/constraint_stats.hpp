// lua/constraintStats-4.lua: every constraint with what {c} counts for it, for /metrics. Changes
// nothing.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct ConstraintStats {
  static constexpr ScriptId id = ScriptId::constraint_stats;
  static constexpr std::array<std::string_view, 4> key_names = {
      "constraints", "counters", "lease_keys_prefix", "lease_prefix"};
  static constexpr std::array<std::string_view, 1> arg_names = {"now_ms"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string constraints, counters, lease_keys_prefix, lease_prefix;
  };
  struct Args {
    std::int64_t now_ms = 0;
  };
  struct Constraint {
    std::string name;
    std::string definition;  // as stored: api::encode_constraint
    std::int64_t running = 0, started = 0;
  };

  static Keys keys(const redis::Keys& k) {
    return {k.constraints(), k.constraint_counters(), k.constraint_lease_keys_prefix(),
            k.constraint_lease_prefix()};
  }
  static ScriptCall call(Keys k, Args a) {
    return {id,
            {std::move(k.constraints), std::move(k.counters), std::move(k.lease_keys_prefix),
             std::move(k.lease_prefix)},
            {arg(a.now_ms)}};
  }
  static Decoded<std::vector<Constraint>> decode(const Reply& reply) {
    if (!reply.is_array()) return unexpected(bad_reply(id, "not an array", reply));
    std::vector<Constraint> out;
    out.reserve(reply.elements.size());
    for (const Reply& e : reply.elements) {
      const auto& c = e.elements;
      if (!e.is_array() || c.size() != 4 || c[0].type != Reply::Type::string ||
          c[1].type != Reply::Type::string || !c[2].is_integer() || !c[3].is_integer()) {
        return unexpected(
            bad_reply(id, "a constraint is not {name, definition, running, started}", reply));
      }
      out.push_back(Constraint{c[0].str, c[1].str, c[2].integer, c[3].integer});
    }
    return out;
  }
};

}  // namespace jq::redis::bindings
