// lua/expireWorkers-4.lua: removes registrations whose ttl lapsed, with their slots and stats.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct ExpireWorkers {
  static constexpr ScriptId id = ScriptId::expire_workers;
  static constexpr std::array<std::string_view, 4> key_names = {"workers", "worker_urls",
                                                                "slots_prefix", "stats_prefix"};
  static constexpr std::array<std::string_view, 2> arg_names = {"now_ms", "channel"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string workers, worker_urls, slots_prefix, stats_prefix;
  };
  struct Args {
    std::int64_t now_ms = 0;
    std::string channel;
  };

  static Keys keys(const redis::Keys& k) {
    return {k.workers(), k.worker_urls(), k.worker_slots_prefix(), k.worker_stats_prefix()};
  }
  static ScriptCall call(Keys k, Args a) {
    return {id,
            {std::move(k.workers), std::move(k.worker_urls), std::move(k.slots_prefix),
             std::move(k.stats_prefix)},
            {arg(a.now_ms), std::move(a.channel)}};
  }
  // The ids removed.
  static Decoded<std::vector<std::string>> decode(const Reply& reply) {
    if (!reply.is_array()) return unexpected(bad_reply(id, "not an array of ids", reply));
    std::vector<std::string> ids;
    for (const Reply& e : reply.elements) {
      if (e.type != Reply::Type::string) return unexpected(bad_reply(id, "an id", reply));
      ids.push_back(e.str);
    }
    return ids;
  }
};

}  // namespace jq::redis::bindings
