// lua/holdJobs-6.lua: what admitJobs decided, applied in the shard: refused jobs wait held (no
// attempt used), admitted ones give up a unique claim held until they start.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct HoldJobs {
  static constexpr ScriptId id = ScriptId::hold_jobs;
  static constexpr std::array<std::string_view, 6> key_names = {
      "jobs", "inflight", "counts", "stats", "unique_prefix", "held_prefix"};
  static constexpr std::array<std::string_view, 0> arg_names = {};
  static constexpr std::size_t args_per_item = 4;  // four per job (Job)

  struct Keys {
    std::string jobs, inflight, counts, stats, unique_prefix, held_prefix;
  };
  struct Job {
    std::string field;
    std::int64_t attempt = 0;
    std::string constraint;  // the pair that refused it; "" and "" for an admitted job
    std::string key;
  };
  struct Args {
    std::vector<Job> jobs;
  };
  // Per job.
  enum class Status : std::int64_t { stale = 0, done = 1 };
  static constexpr std::array statuses = {Status::stale, Status::done};

  static Keys keys(const redis::Keys& k, int shard) {
    return {k.jobs_prefix(shard), k.inflight(shard),      k.counts(shard),
            k.stats(shard),       k.unique_prefix(shard), k.held_prefix(shard)};
  }
  static ScriptCall call(Keys k, Args a) {
    ScriptCall c{id,
                 {std::move(k.jobs), std::move(k.inflight), std::move(k.counts), std::move(k.stats),
                  std::move(k.unique_prefix), std::move(k.held_prefix)},
                 {}};
    c.args.reserve(a.jobs.size() * args_per_item);
    for (Job& j : a.jobs) {
      c.args.push_back(std::move(j.field));
      c.args.push_back(arg(j.attempt));
      c.args.push_back(std::move(j.constraint));
      c.args.push_back(std::move(j.key));
    }
    return c;
  }
  static Decoded<std::vector<Status>> decode(const Reply& reply, std::size_t jobs) {
    return statuses_reply(id, statuses, reply, jobs);
  }
};

}  // namespace jq::redis::bindings
