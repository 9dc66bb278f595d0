// lua/deleteDeadJob-3.lua: an operator removes a dead job for good.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct DeleteDeadJob {
  static constexpr ScriptId id = ScriptId::delete_dead_job;
  static constexpr std::array<std::string_view, 3> key_names = {"jobs", "dead", "counts"};
  static constexpr std::array<std::string_view, 1> arg_names = {"field"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string jobs, dead, counts;
  };
  struct Args {
    std::string field;
  };
  enum class Status : std::int64_t { deleted = 1, not_found = -1 };
  static constexpr std::array statuses = {Status::deleted, Status::not_found};

  static Keys keys(const redis::Keys& k, int shard) {
    return {k.jobs_prefix(shard), k.dead(shard), k.counts(shard)};
  }
  static ScriptCall call(Keys k, Args a) {
    return {id, {std::move(k.jobs), std::move(k.dead), std::move(k.counts)}, {std::move(a.field)}};
  }
  static Decoded<Status> decode(const Reply& reply) { return integer_status(id, statuses, reply); }
};

}  // namespace jq::redis::bindings
