// lua/queueStats-3.lua: one name's numbers in one shard. Changes nothing.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct QueueStats {
  static constexpr ScriptId id = ScriptId::queue_stats;
  static constexpr std::array<std::string_view, 3> key_names = {"queue", "counts", "jobs"};
  static constexpr std::array<std::string_view, 1> arg_names = {"name"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string queue, counts, jobs;
  };
  struct Args {
    std::string name;
  };
  struct Stats {
    std::int64_t ready = 0, scheduled = 0, running = 0, dead = 0;
    std::optional<std::int64_t> oldest_stamp_us;  // nullopt: nothing is ready
  };

  static Keys keys(const redis::Keys& k, int shard, std::string_view name) {
    return {k.ready(shard, name), k.counts(shard), k.jobs_prefix(shard)};
  }
  static ScriptCall call(Keys k, Args a) {
    return {id, {std::move(k.queue), std::move(k.counts), std::move(k.jobs)}, {std::move(a.name)}};
  }
  static Decoded<Stats> decode(const Reply& reply) {
    auto n = integers_reply(id, reply, 5);
    if (!n) return unexpected(std::move(n.error()));
    Stats out{(*n)[0], (*n)[1], (*n)[2], (*n)[3], std::nullopt};
    if ((*n)[4] >= 0) out.oldest_stamp_us = (*n)[4];
    return out;
  }
};

}  // namespace jq::redis::bindings
