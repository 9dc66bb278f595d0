// lua/reclassifyJobs-3.lua: gives jobs that have not started the constraints they match now.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct ReclassifyJobs {
  static constexpr ScriptId id = ScriptId::reclassify_jobs;
  static constexpr std::array<std::string_view, 3> key_names = {"jobs", "ready_prefix",
                                                                "held_prefix"};
  static constexpr std::array<std::string_view, 2> arg_names = {"channel", "shard"};
  static constexpr std::size_t args_per_item = 3;  // then three per job (Job)

  struct Keys {
    std::string jobs, ready_prefix, held_prefix;
    std::string channel;  // not a key: ARGV
  };
  struct Job {
    std::string field;
    std::string record;       // as read: the record is changed only if it is still this
    std::string constraints;  // MessagePack [name1, key1, ...]; '' for none
  };
  struct Args {
    std::int64_t shard = 0;
    std::vector<Job> jobs;
  };

  static Keys keys(const redis::Keys& k, int shard) {
    return {k.jobs_prefix(shard), k.ready_prefix(shard), k.held_prefix(shard),
            k.events_channel(shard)};
  }
  static ScriptCall call(Keys k, Args a) {
    ScriptCall c{id,
                 {std::move(k.jobs), std::move(k.ready_prefix), std::move(k.held_prefix)},
                 {std::move(k.channel), arg(a.shard)}};
    c.args.reserve(arg_names.size() + a.jobs.size() * args_per_item);
    for (Job& j : a.jobs) {
      c.args.push_back(std::move(j.field));
      c.args.push_back(std::move(j.record));
      c.args.push_back(std::move(j.constraints));
    }
    return c;
  }
  // The number of jobs changed.
  static Decoded<std::int64_t> decode(const Reply& reply) { return integer_reply(id, reply); }
};

}  // namespace jq::redis::bindings
