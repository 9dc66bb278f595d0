// lua/retryDeadJob-6.lua: a dead job is ready again at once with its attempts reset.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct RetryDeadJob {
  static constexpr ScriptId id = ScriptId::retry_dead_job;
  static constexpr std::array<std::string_view, 6> key_names = {"jobs", "dead", "ready_prefix",
                                                                "counts", "done"};
  static constexpr std::array<std::string_view, 4> arg_names = {"field", "ready_stamp_us",
                                                                "channel", "shard"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string jobs, dead, ready_prefix, counts, done, order_prefix;
  };
  struct Args {
    std::string field;
    std::int64_t ready_stamp_us = 0;
    std::string channel;
    std::int64_t shard = 0;
  };
  enum class Status : std::int64_t { ready = 1, not_found = -1 };
  static constexpr std::array statuses = {Status::ready, Status::not_found};

  static Keys keys(const redis::Keys& k, int shard, std::string_view field) {
    return {k.jobs_prefix(shard), k.dead(shard),        k.ready_prefix(shard),
            k.counts(shard),      k.done(shard, field), k.order_prefix(shard)};
  }
  static ScriptCall call(Keys k, Args a) {
    return {id,
            {std::move(k.jobs), std::move(k.dead), std::move(k.ready_prefix), std::move(k.counts),
             std::move(k.done), std::move(k.order_prefix)},
            {std::move(a.field), arg(a.ready_stamp_us), std::move(a.channel), arg(a.shard)}};
  }
  static Decoded<Status> decode(const Reply& reply) { return integer_status(id, statuses, reply); }
};

}  // namespace jq::redis::bindings
