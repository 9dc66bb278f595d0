// lua/getJob-2.lua: reads a job's record, live or finished.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct GetJob {
  static constexpr ScriptId id = ScriptId::get_job;
  static constexpr std::array<std::string_view, 2> key_names = {"jobs", "done"};
  static constexpr std::array<std::string_view, 1> arg_names = {"field"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string jobs, done;
  };
  struct Args {
    std::string field;
  };

  static Keys keys(const redis::Keys& k, int shard, std::string_view field) {
    return {k.jobs_prefix(shard), k.done(shard, field)};
  }
  static ScriptCall call(Keys k, Args a) {
    return {id, {std::move(k.jobs), std::move(k.done)}, {std::move(a.field)}};
  }
  // The packed record; nullopt when the job has none.
  static Decoded<std::optional<std::string>> decode(const Reply& reply) {
    if (reply.is_nil()) return std::optional<std::string>();
    if (reply.type != Reply::Type::string) return unexpected(bad_reply(id, "no record", reply));
    return std::optional<std::string>(reply.str);
  }
};

}  // namespace jq::redis::bindings
