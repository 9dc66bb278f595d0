// lua/cancelJob-8.lua: removes a job that has not started.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct CancelJob {
  static constexpr ScriptId id = ScriptId::cancel_job;
  static constexpr std::array<std::string_view, 8> key_names = {
      "jobs",         "scheduled",     "done",         "counts",
      "ready_prefix", "unique_prefix", "order_prefix", "held_prefix"};
  static constexpr std::array<std::string_view, 4> arg_names = {"field", "now_ms", "channel",
                                                                "shard"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string jobs, scheduled, done, counts, ready_prefix, unique_prefix, order_prefix,
        held_prefix;
  };
  struct Args {
    std::string field;
    std::int64_t now_ms = 0;
    std::string channel;
    std::int64_t shard = 0;
  };
  enum class Status : std::int64_t { cancelled = 1, not_found = -1, running = -2, finished = -3 };
  static constexpr std::array statuses = {Status::cancelled, Status::not_found, Status::running,
                                          Status::finished};

  static Keys keys(const redis::Keys& k, int shard, std::string_view field) {
    return {k.jobs_prefix(shard),  k.scheduled(shard),    k.done(shard, field),
            k.counts(shard),       k.ready_prefix(shard), k.unique_prefix(shard),
            k.order_prefix(shard), k.held_prefix(shard)};
  }
  static ScriptCall call(Keys k, Args a) {
    return {id,
            {std::move(k.jobs), std::move(k.scheduled), std::move(k.done), std::move(k.counts),
             std::move(k.ready_prefix), std::move(k.unique_prefix), std::move(k.order_prefix),
             std::move(k.held_prefix)},
            {std::move(a.field), arg(a.now_ms), std::move(a.channel), arg(a.shard)}};
  }
  static Decoded<Status> decode(const Reply& reply) { return integer_status(id, statuses, reply); }
};

}  // namespace jq::redis::bindings
