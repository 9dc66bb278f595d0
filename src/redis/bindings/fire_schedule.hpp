// lua/fireSchedule-8.lua: claims one tick of a schedule (or a run now) and makes its job, in the
// shard the schedule lives in.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/bindings/push_jobs.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct FireSchedule {
  static constexpr ScriptId id = ScriptId::fire_schedule;
  static constexpr std::array<std::string_view, 8> key_names = {
      "schedules",    "stats",  "jobs",          "names",
      "ready_prefix", "counts", "unique_prefix", "order_prefix"};
  static constexpr std::array<std::string_view, 26> arg_names = {
      "name",         "token",      "version",        "mode",          "next_tick",
      "action",       "missed",     "after_ms",       "overlap",       "scheduled_at_ms",
      "scheduled_at", "now_ms",     "ready_stamp_us", "channel",       "shard",
      "job_name",     "argument",   "priority",       "max_retry",     "keep_result",
      "timeout_ms",   "unique_key", "unique_until",   "unique_for_ms", "ordering_key",
      "constraints"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string schedules, stats, jobs, names, ready_prefix, counts, unique_prefix, order_prefix;
  };
  enum class Mode { tick, now };
  enum class Action { run, skip };
  // As pushJobs takes a job; its ready_at_ms is not sent (a schedule's job is ready at once).
  using Job = PushJobs::Job;
  struct Args {
    std::string name;
    std::int64_t token = 0;
    std::int64_t version = 0;
    Mode mode = Mode::tick;
    std::int64_t next_tick_ms = 0;  // tick: the record's next tick as read
    Action action = Action::run;
    std::int64_t missed = 0;
    std::int64_t after_ms = 0;  // tick: the next tick after this one; 0 none
    bool overlap_skip = false;
    std::int64_t scheduled_at_ms = 0;
    std::string scheduled_at;  // ISO 8601 with the zone's offset
    std::int64_t now_ms = 0;
    std::int64_t ready_stamp_us = 0;
    std::string channel;
    std::int64_t shard = 0;
    Job job;
  };
  enum class Status : std::int64_t {
    made = 1,
    overlap = 2,
    duplicate = 3,
    missed = 4,
    not_found = -2,
    changed = -3
  };
  static constexpr std::array statuses = {Status::made,   Status::overlap,   Status::duplicate,
                                          Status::missed, Status::not_found, Status::changed};
  struct Fired {
    Status status;
    std::string job_id;  // made: the new job; overlap: the unfinished one; duplicate: the holder
  };

  static Keys keys(const redis::Keys& k, int shard) {
    return {k.schedules(shard),    k.stats(shard),  k.jobs_prefix(shard),   k.names(shard),
            k.ready_prefix(shard), k.counts(shard), k.unique_prefix(shard), k.order_prefix(shard)};
  }
  static ScriptCall call(Keys k, Args a) {
    ScriptCall c{id,
                 {std::move(k.schedules), std::move(k.stats), std::move(k.jobs), std::move(k.names),
                  std::move(k.ready_prefix), std::move(k.counts), std::move(k.unique_prefix),
                  std::move(k.order_prefix)},
                 {}};
    c.args.reserve(arg_names.size());
    c.args.push_back(std::move(a.name));
    c.args.push_back(arg(a.token));
    c.args.push_back(arg(a.version));
    c.args.push_back(a.mode == Mode::now ? "now" : "tick");
    c.args.push_back(arg(a.next_tick_ms));
    c.args.push_back(a.action == Action::skip ? "skip" : "run");
    c.args.push_back(arg(a.missed));
    c.args.push_back(arg(a.after_ms));
    c.args.push_back(arg(a.overlap_skip));
    c.args.push_back(arg(a.scheduled_at_ms));
    c.args.push_back(std::move(a.scheduled_at));
    c.args.push_back(arg(a.now_ms));
    c.args.push_back(arg(a.ready_stamp_us));
    c.args.push_back(std::move(a.channel));
    c.args.push_back(arg(a.shard));
    Job& j = a.job;
    c.args.push_back(std::move(j.name));
    c.args.push_back(std::move(j.argument));
    c.args.push_back(arg(std::int64_t{j.priority}));
    c.args.push_back(arg(j.max_retry));
    c.args.push_back(arg(j.keep_result));
    c.args.push_back(arg(j.timeout_ms));
    c.args.push_back(std::move(j.unique_key));
    c.args.push_back(arg(j.unique_until_started));
    c.args.push_back(arg(j.unique_for_ms));
    c.args.push_back(std::move(j.ordering_key));
    c.args.push_back(std::move(j.constraints));
    return c;
  }
  static Decoded<Fired> decode(const Reply& reply) {
    if (!reply.is_array() || reply.elements.size() != 2 || !reply.elements[0].is_integer() ||
        reply.elements[1].type != Reply::Type::string) {
      return unexpected(bad_reply(id, "not {status, id}", reply));
    }
    auto status = status_of(id, reply.elements[0].integer, statuses, reply);
    if (!status) return unexpected(std::move(status.error()));
    return Fired{*status, reply.elements[1].str};
  }
};

}  // namespace jq::redis::bindings
