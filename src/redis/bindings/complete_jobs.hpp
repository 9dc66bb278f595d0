// lua/completeJobs-13.lua: workers' successes end their jobs, a batch of one shard per call. With
// the constraint keys (one Redis holds every key) it releases their leases in the same step.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct CompleteJobs {
  static constexpr ScriptId id = ScriptId::complete_jobs;
  static constexpr std::array<std::string_view, 13> key_names = {
      "jobs",         "inflight",     "done_prefix",     "counts",
      "stats",        "ready_prefix", "scheduled",       "unique_prefix",
      "order_prefix", "watch_prefix", "constraint_defs", "constraint_state",
      "held_prefix"};
  // The last three: leases released, and the slots they free handed on, in this step.
  static constexpr std::size_t optional_keys = 3;
  static constexpr std::array<std::string_view, 5> arg_names = {"result_ttl_s", "channel", "shard",
                                                                "now_ms", "constraint_channel"};
  static constexpr std::size_t args_per_item = 4;  // then four per job (Job)

  struct Keys {
    std::string jobs, inflight, done_prefix, counts, stats, ready_prefix, scheduled, unique_prefix,
        order_prefix, watch_prefix;
    // All empty: not given (on a cluster {c} is in another slot); releaseLeases frees them then.
    // Given, the slots they free are handed on in the same step (lua/lib/preamble_5_run_wakes.lua).
    std::string constraint_defs, constraint_state, held_prefix;
    std::string constraint_channel;  // the {c} events channel; not a key: ARGV
  };
  struct Job {
    std::string field;
    std::int64_t attempt = 0;
    std::string result;  // MessagePack bytes; empty for a job that keeps no result
    // Polls of the caller wait for this result, so it gets it and Redis does not store it:
    // how many of them are known to have counted themselves in the watch key.
    std::optional<std::int64_t> handed{};
  };
  struct Args {
    std::int64_t result_ttl_s = 0;
    std::string channel;
    std::int64_t shard = 0;
    std::int64_t now_ms = 0;
    std::vector<Job> jobs;
  };
  // Per job.
  // handed: done, and the kept result is for the caller to hand over (not stored).
  enum class Status : std::int64_t { stale = 0, done = 1, handed = 2 };
  static constexpr std::array statuses = {Status::stale, Status::done, Status::handed};

  // `release`: the constraint keys too, so leases go in this step (one Redis only).
  static Keys keys(const redis::Keys& k, int shard, bool release = false) {
    Keys out{k.jobs_prefix(shard),
             k.inflight(shard),
             k.done_prefix(shard),
             k.counts(shard),
             k.stats(shard),
             k.ready_prefix(shard),
             k.scheduled(shard),
             k.unique_prefix(shard),
             k.order_prefix(shard),
             k.watch_prefix(shard),
             {},
             {},
             {},
             {}};
    if (release) {
      out.constraint_defs = k.constraints();
      out.constraint_state = k.constraint_state_prefix();
      out.held_prefix = k.held_prefix(shard);
      out.constraint_channel = k.constraint_channel();
    }
    return out;
  }
  static ScriptCall call(Keys k, Args a) {
    ScriptCall c{
        id,
        {std::move(k.jobs), std::move(k.inflight), std::move(k.done_prefix), std::move(k.counts),
         std::move(k.stats), std::move(k.ready_prefix), std::move(k.scheduled),
         std::move(k.unique_prefix), std::move(k.order_prefix), std::move(k.watch_prefix)},
        {arg(a.result_ttl_s), std::move(a.channel), arg(a.shard), arg(a.now_ms),
         std::move(k.constraint_channel)}};
    if (!k.constraint_defs.empty()) {
      c.keys.push_back(std::move(k.constraint_defs));
      c.keys.push_back(std::move(k.constraint_state));
      c.keys.push_back(std::move(k.held_prefix));
    }
    c.args.reserve(arg_names.size() + a.jobs.size() * args_per_item);
    for (Job& j : a.jobs) {
      c.args.push_back(std::move(j.field));
      c.args.push_back(arg(j.attempt));
      c.args.push_back(std::move(j.result));
      c.args.push_back(j.handed ? arg(*j.handed) : "-1");
    }
    return c;
  }
  // One status per job, in order; `jobs` is how many were given.
  static Decoded<std::vector<Status>> decode(Reply reply, std::size_t jobs) {
    return statuses_reply(id, statuses, reply, jobs);
  }
};

}  // namespace jq::redis::bindings
