// lua/releaseLeases-2.lua: ended attempts' leases go; the slots they free are handed to held
// jobs (wake orders).
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/bindings/wake_orders.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct ReleaseLeases {
  static constexpr ScriptId id = ScriptId::release_leases;
  static constexpr std::array<std::string_view, 2> key_names = {"constraint_defs",
                                                                "constraint_state"};
  static constexpr std::array<std::string_view, 1> arg_names = {"now_ms"};
  static constexpr std::size_t args_per_item = 2;  // then two per job (Lease)

  struct Keys {
    std::string constraint_defs, constraint_state;
  };
  struct Lease {
    std::string lease;        // "<shard>-<field>:<attempt>", as admitJobs took it
    std::string constraints;  // MessagePack [name1, key1, ...]
  };
  struct Args {
    std::int64_t now_ms = 0;
    std::vector<Lease> leases;
  };

  static Keys keys(const redis::Keys& k) { return {k.constraints(), k.constraint_state_prefix()}; }
  static ScriptCall call(Keys k, Args a) {
    ScriptCall c{
        id, {std::move(k.constraint_defs), std::move(k.constraint_state)}, {arg(a.now_ms)}};
    c.args.reserve(arg_names.size() + a.leases.size() * args_per_item);
    for (Lease& l : a.leases) {
      c.args.push_back(std::move(l.lease));
      c.args.push_back(std::move(l.constraints));
    }
    return c;
  }
  static Decoded<std::vector<WakeOrder>> decode(Reply reply) {
    if (!reply.is_array()) return unexpected(bad_reply(id, "not an array", reply));
    return wake_orders(id, reply.elements, 0, reply);
  }
};

}  // namespace jq::redis::bindings
