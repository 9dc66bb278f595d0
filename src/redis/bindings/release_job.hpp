// lua/releaseJob-5.lua: gives back a reserved job whose attempt never really happened.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct ReleaseJob {
  static constexpr ScriptId id = ScriptId::release_job;
  static constexpr std::array<std::string_view, 5> key_names = {"jobs", "inflight", "queue",
                                                                "counts", "unique_prefix"};
  static constexpr std::array<std::string_view, 5> arg_names = {"field", "attempt", "channel",
                                                                "shard", "token"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string jobs, inflight, queue, counts, unique_prefix;
  };
  struct Args {
    std::string field;
    std::int64_t attempt = 0;
    std::string channel;
    std::int64_t shard = 0;
    std::string token;  // the reservation's (ReservedJob::token)
  };
  enum class Status : std::int64_t { stale = 0, released = 1 };
  static constexpr std::array statuses = {Status::stale, Status::released};

  static Keys keys(const redis::Keys& k, int shard, std::string_view name) {
    return {k.jobs_prefix(shard), k.inflight(shard), k.ready(shard, name), k.counts(shard),
            k.unique_prefix(shard)};
  }
  static ScriptCall call(Keys k, Args a) {
    return {id,
            {std::move(k.jobs), std::move(k.inflight), std::move(k.queue), std::move(k.counts),
             std::move(k.unique_prefix)},
            {std::move(a.field), arg(a.attempt), std::move(a.channel), arg(a.shard),
             std::move(a.token)}};
  }
  static Decoded<Status> decode(const Reply& reply) { return integer_status(id, statuses, reply); }
};

}  // namespace jq::redis::bindings
