// lua/reserveJobs-9.lua: hands the best ready jobs of one name to a dispatcher; with max 0 only
// reads the queue's head. With the constraint keys (one Redis holds every key) it admits or holds
// the jobs that matched constraints in the same step.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct ReserveJobs {
  static constexpr ScriptId id = ScriptId::reserve_jobs;
  static constexpr std::array<std::string_view, 9> key_names = {
      "jobs",          "inflight",    "queue",           "counts",          "stats",
      "unique_prefix", "held_prefix", "constraint_defs", "constraint_state"};
  static constexpr std::size_t optional_keys = 2;  // the last two: admission in this step
  static constexpr std::array<std::string_view, 8> arg_names = {
      "now_ms", "max", "bound_priority", "bound_member", "name", "shard", "channel", "token"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string jobs, inflight, queue, counts, stats, unique_prefix, held_prefix;
    // Both empty: not given (on a cluster {c} is in another slot); admitJobs decides then.
    std::string constraint_defs, constraint_state;
    std::string channel;  // the {c} events channel; not a key: ARGV
  };
  struct Args {
    std::int64_t now_ms = 0;
    std::int64_t max = 0;
    std::optional<std::int64_t> bound_priority;  // nullopt: no bound
    std::string bound_member;
    std::string name;
    std::int64_t shard = 0;
    std::string token;  // unique to this call: the jobs it takes keep it (findReserved)
  };
  struct Head {
    std::string member;  // readyStamp(9) + field
    std::int64_t priority = 0;
  };
  struct Taken {
    std::string field;
    std::string record;  // MessagePack, as stored after the update
  };
  struct Reserved {
    std::optional<Head> head;  // after the reservation; nullopt: the queue is empty
    std::int64_t ready = 0;    // members waiting in its lists (8 best priorities), 0 if empty
    std::vector<Taken> jobs;   // in ready order
  };

  // `admit`: the constraint keys too, so jobs are admitted in this step (one Redis only).
  static Keys keys(const redis::Keys& k, int shard, std::string_view name, bool admit = false) {
    Keys out{k.jobs_prefix(shard),
             k.inflight(shard),
             k.ready(shard, name),
             k.counts(shard),
             k.stats(shard),
             k.unique_prefix(shard),
             k.held_prefix(shard),
             {},
             {},
             k.constraint_channel()};
    if (admit) {
      out.constraint_defs = k.constraints();
      out.constraint_state = k.constraint_state_prefix();
    }
    return out;
  }
  static ScriptCall call(Keys k, Args a) {
    ScriptCall c{
        id,
        {std::move(k.jobs), std::move(k.inflight), std::move(k.queue), std::move(k.counts),
         std::move(k.stats), std::move(k.unique_prefix), std::move(k.held_prefix)},
        {arg(a.now_ms), arg(a.max), a.bound_priority ? arg(*a.bound_priority) : std::string(),
         std::move(a.bound_member), std::move(a.name), arg(a.shard), std::move(k.channel),
         std::move(a.token)}};
    if (!k.constraint_defs.empty()) {
      c.keys.push_back(std::move(k.constraint_defs));
      c.keys.push_back(std::move(k.constraint_state));
    }
    return c;
  }
  // A head as this script (and readHeads) answers it: member and priority, '' and '' for an
  // empty queue. `reply` is the whole reply, for the error.
  static Decoded<std::optional<Head>> head(ScriptId script, Reply& member, const Reply& priority,
                                           const Reply& reply) {
    if (!priority.is_integer() && priority.str.empty()) return std::optional<Head>();
    auto p = priority.as_integer();
    if (!p) return unexpected(bad_reply(script, "head priority", reply));
    return std::optional<Head>(Head{std::move(member.str), *p});
  }
  static Decoded<Reserved> decode(Reply reply) {
    auto& e = reply.elements;
    if (!reply.is_array() || e.size() < 3 || e.size() % 2 != 1) {
      return unexpected(
          bad_reply(id, "not {head_member, head_priority, ready, field, record...}", reply));
    }
    Reserved out;
    auto h = head(id, e[0], e[1], reply);
    if (!h) return unexpected(std::move(h.error()));
    out.head = std::move(*h);
    const auto ready = e[2].as_integer();
    if (!ready) return unexpected(bad_reply(id, "ready", reply));
    out.ready = *ready;
    out.jobs.reserve(e.size() / 2 - 1);
    for (std::size_t i = 3; i < e.size(); i += 2) {
      out.jobs.push_back(Taken{std::move(e[i].str), std::move(e[i + 1].str)});
    }
    return out;
  }
};

}  // namespace jq::redis::bindings
