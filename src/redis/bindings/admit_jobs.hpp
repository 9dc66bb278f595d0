// lua/admitJobs-2.lua: whether every constraint of each candidate a reservation took lets it
// start; takes them all or none, under {c}.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct AdmitJobs {
  static constexpr ScriptId id = ScriptId::admit_jobs;
  static constexpr std::array<std::string_view, 2> key_names = {"constraint_defs",
                                                                "constraint_state"};
  static constexpr std::array<std::string_view, 2> arg_names = {"now_ms", "channel"};
  static constexpr std::size_t args_per_item = 5;  // then five per job (Job)

  struct Keys {
    std::string constraint_defs, constraint_state;
    std::string channel;  // not a key: ARGV
  };
  struct Job {
    std::int64_t shard = 0;
    std::string lease;        // "<shard>-<field>:<attempt>"
    std::string ready_stamp;  // 9 base62 characters (µs)
    std::int64_t deadline_ms = 0;
    std::string constraints;  // MessagePack [name1, key1, ...]
  };
  struct Args {
    std::int64_t now_ms = 0;
    std::vector<Job> jobs;
  };

  static Keys keys(const redis::Keys& k) {
    return {k.constraints(), k.constraint_state_prefix(), k.constraint_channel()};
  }
  static ScriptCall call(Keys k, Args a) {
    ScriptCall c{id,
                 {std::move(k.constraint_defs), std::move(k.constraint_state)},
                 {arg(a.now_ms), std::move(k.channel)}};
    c.args.reserve(arg_names.size() + a.jobs.size() * args_per_item);
    for (Job& j : a.jobs) {
      c.args.push_back(arg(j.shard));
      c.args.push_back(std::move(j.lease));
      c.args.push_back(std::move(j.ready_stamp));
      c.args.push_back(arg(j.deadline_ms));
      c.args.push_back(std::move(j.constraints));
    }
    return c;
  }
  // Per job, in order: 0 admitted; i > 0 refused by its i-th constraint (1-based pair).
  static Decoded<std::vector<std::int64_t>> decode(const Reply& reply, std::size_t jobs) {
    auto out = integers_reply(id, reply);
    if (!out) return unexpected(std::move(out.error()));
    if (out->size() != jobs) return unexpected(bad_reply(id, "not one answer per job", reply));
    return out;
  }
};

}  // namespace jq::redis::bindings
