// lua/constraintState-3.lua: what one constraint holds now, per key. Changes nothing.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct ConstraintState {
  static constexpr ScriptId id = ScriptId::constraint_state;
  static constexpr std::array<std::string_view, 3> key_names = {"lease_keys", "lease_prefix",
                                                                "tat_prefix"};
  static constexpr std::array<std::string_view, 2> arg_names = {"now_ms", "top"};
  static constexpr std::size_t args_per_item = 2;  // then two per key with waiting jobs

  struct Keys {
    std::string lease_keys, lease_prefix, tat_prefix;
  };
  struct Waiting {
    std::string key;
    std::int64_t waiting = 0;  // over all shards
  };
  struct Args {
    std::int64_t now_ms = 0;
    std::int64_t top = 0;
    std::vector<Waiting> waiting;
  };
  struct Key {
    std::string key;
    std::int64_t waiting = 0, running = 0;
    std::optional<std::int64_t> tat_ms;  // nullopt: no rate state
  };
  struct State {
    std::int64_t waiting = 0, running = 0, keys = 0;
    std::vector<Key> top;
  };

  static Keys keys(const redis::Keys& k, std::string_view name) {
    return {k.constraint_lease_keys(name), k.constraint_leases(name), k.constraint_tats(name)};
  }
  static ScriptCall call(Keys k, Args a) {
    ScriptCall c{id,
                 {std::move(k.lease_keys), std::move(k.lease_prefix), std::move(k.tat_prefix)},
                 {arg(a.now_ms), arg(a.top)}};
    c.args.reserve(arg_names.size() + a.waiting.size() * args_per_item);
    for (Waiting& w : a.waiting) {
      c.args.push_back(std::move(w.key));
      c.args.push_back(arg(w.waiting));
    }
    return c;
  }
  static Decoded<State> decode(const Reply& reply) {
    const auto& e = reply.elements;
    if (!reply.is_array() || e.size() < 3 || !e[0].is_integer() || !e[1].is_integer() ||
        !e[2].is_integer()) {
      return unexpected(bad_reply(id, "not {waiting, running, keys, ...}", reply));
    }
    State out{e[0].integer, e[1].integer, e[2].integer, {}};
    for (std::size_t i = 3; i < e.size(); ++i) {
      const auto& k = e[i].elements;
      if (!e[i].is_array() || k.size() != 4 || k[0].type != Reply::Type::string ||
          !k[1].is_integer() || !k[2].is_integer() || !k[3].is_integer()) {
        return unexpected(bad_reply(id, "a key is not {key, waiting, running, tat_ms}", reply));
      }
      std::optional<std::int64_t> tat;
      if (k[3].integer >= 0) tat = k[3].integer;
      out.top.push_back(Key{k[0].str, k[1].integer, k[2].integer, tat});
    }
    return out;
  }
};

}  // namespace jq::redis::bindings
