// lua/promoteJobs-4.lua: makes due retries ready.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct PromoteJobs {
  static constexpr ScriptId id = ScriptId::promote_jobs;
  static constexpr std::array<std::string_view, 4> key_names = {"scheduled", "jobs", "ready_prefix",
                                                                "counts"};
  static constexpr std::array<std::string_view, 4> arg_names = {"now_ms", "max", "channel",
                                                                "shard"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string scheduled, jobs, ready_prefix, counts;
  };
  struct Args {
    std::int64_t now_ms = 0;
    std::int64_t max = 0;
    std::string channel;
    std::int64_t shard = 0;
  };
  struct Promoted {
    std::int64_t promoted = 0;
    std::optional<std::int64_t> next_due_ms;  // nullopt: nothing is left scheduled
  };

  static Keys keys(const redis::Keys& k, int shard) {
    return {k.scheduled(shard), k.jobs_prefix(shard), k.ready_prefix(shard), k.counts(shard)};
  }
  static ScriptCall call(Keys k, Args a) {
    return {
        id,
        {std::move(k.scheduled), std::move(k.jobs), std::move(k.ready_prefix), std::move(k.counts)},
        {arg(a.now_ms), arg(a.max), std::move(a.channel), arg(a.shard)}};
  }
  static Decoded<Promoted> decode(const Reply& reply) {
    auto n = integers_reply(id, reply, 2);
    if (!n) return unexpected(std::move(n.error()));
    Promoted out{(*n)[0], std::nullopt};
    if ((*n)[1] >= 0) out.next_due_ms = (*n)[1];
    return out;
  }
};

}  // namespace jq::redis::bindings
