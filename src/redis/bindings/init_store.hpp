// lua/initStore-1.lua: creates the store's metadata, or reports the stored shard count and layout.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct InitStore {
  static constexpr ScriptId id = ScriptId::init_store;
  static constexpr std::array<std::string_view, 1> key_names = {"meta"};
  static constexpr std::array<std::string_view, 3> arg_names = {"shards", "now_ms",
                                                                "layout_version"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string meta;
  };
  struct Args {
    std::int64_t shards = 0;
    std::int64_t now_ms = 0;
    std::int64_t layout_version = 0;
  };
  struct Stored {
    std::int64_t shards = 0;
    std::int64_t layout_version = 0;
  };

  static Keys keys(const redis::Keys& k) { return {k.meta()}; }
  static ScriptCall call(Keys k, const Args& a) {
    return {id, {std::move(k.meta)}, {arg(a.shards), arg(a.now_ms), arg(a.layout_version)}};
  }
  static Decoded<Stored> decode(const Reply& reply) {
    auto n = integers_reply(id, reply, 2);
    if (!n) return unexpected(std::move(n.error()));
    return Stored{(*n)[0], (*n)[1]};
  }
};

}  // namespace jq::redis::bindings
