// lua/pushJobs-10.lua: stores a batch of new jobs in one shard: ready, scheduled, or waiting
// behind their ordering key, or taken at once for a worker slot the master holds free;
// duplicates of a held unique claim are not stored, or merged into the job holding it
// (on_duplicate replace or append) while it has not started.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"
#include "src/redis/record_head.hpp"

namespace jq::redis::bindings {

struct PushJobs {
  static constexpr ScriptId id = ScriptId::push_jobs;
  static constexpr std::array<std::string_view, 10> key_names = {
      "stats",     "jobs",          "names",        "ready_prefix", "counts",
      "scheduled", "unique_prefix", "order_prefix", "held_prefix",  "inflight"};
  static constexpr std::array<std::string_view, 9> arg_names = {
      "now_ms",         "ready_stamp_us", "channel", "traceparent", "shard",
      "max_list_bytes", "take",           "shapes",  "taken_by"};
  // Then four per plain job (is_plain) and thirteen per other job, as `shapes` says: Redis
  // spent 0.85 µs per job handing a job's thirteen to Lua.
  static constexpr std::size_t args_per_item = 4;
  static constexpr std::size_t args_per_other_item = 13;

  struct Keys {
    std::string stats, jobs, names, ready_prefix, counts, scheduled, unique_prefix, order_prefix,
        held_prefix, inflight;
  };
  // What a duplicate push does to the waiting job holding its claim (D_* in the preamble).
  enum class OnDuplicate : std::int64_t { keep = 0, replace = 1, append = 2 };
  struct Job {
    std::string name;
    std::string argument;  // MessagePack bytes
    std::int32_t priority = 0;
    std::int64_t max_retry = 0;
    bool keep_result = false;
    std::int64_t timeout_ms = 0;
    std::int64_t ready_at_ms = 0;  // from delay or run_at; 0: neither given (at once)
    std::string unique_key;        // '' none
    bool unique_until_started = false;
    std::int64_t unique_for_ms = 0;
    std::string ordering_key;  // '' none
    std::string constraints;   // MessagePack array [name1, key1, ...] of those matched; '' none
    OnDuplicate on_duplicate = OnDuplicate::keep;
  };
  // A job with no unique key (nor unique_until started), ordering key or ready time, that is not
  // an append: the usual one, sent in four arguments (name, its whole record as stored queued,
  // priority, timeout). It may have matched constraints.
  static bool is_plain(const Job& j) {
    return j.ready_at_ms == 0 && j.unique_key.empty() && !j.unique_until_started &&
           j.ordering_key.empty() && j.on_duplicate != OnDuplicate::append;
  }
  struct Args {
    std::int64_t now_ms = 0;
    std::int64_t ready_stamp_us = 0;
    std::string channel;
    std::string traceparent;  // '' for none
    std::int64_t shard = 0;
    std::int64_t max_list_bytes = 0;  // the most bytes an appended list may reach
    // '' or one byte per job: '1' takes the job at once if it can be, '0' queues it.
    std::string take;
    std::vector<Job> jobs;
    // With `take`: this call's token, kept by the jobs it takes while they run (R_TAKEN_BY), so
    // that they can be found if its answer is lost (store::LostReservations).
    std::string taken_by;
  };
  // A job the call took at once: its position and its record as stored (running).
  struct Taken {
    std::size_t position = 0;
    std::string record;
  };
  struct Pushed {
    std::vector<std::string> fields;      // one per job; a duplicate's is the claim holder's
    std::vector<std::size_t> duplicates;  // 0-based positions, ascending
    std::vector<std::size_t> merged;      // those of the duplicates that were merged, ascending
    std::vector<Taken> taken;             // ascending positions
  };

  static Keys keys(const redis::Keys& k, int shard) {
    return {k.stats(shard),         k.jobs_prefix(shard),  k.names(shard),
            k.ready_prefix(shard),  k.counts(shard),       k.scheduled(shard),
            k.unique_prefix(shard), k.order_prefix(shard), k.held_prefix(shard),
            k.inflight(shard)};
  }
  static ScriptCall call(Keys k, Args a) {
    ScriptCall c{
        id,
        {std::move(k.stats), std::move(k.jobs), std::move(k.names), std::move(k.ready_prefix),
         std::move(k.counts), std::move(k.scheduled), std::move(k.unique_prefix),
         std::move(k.order_prefix), std::move(k.held_prefix), std::move(k.inflight)},
        {}};
    std::string shapes;
    shapes.reserve(a.jobs.size());
    std::size_t job_args = 0;
    for (const Job& j : a.jobs) {
      const bool plain = is_plain(j);
      shapes.push_back(plain ? 'p' : 'f');
      job_args += plain ? args_per_item : args_per_other_item;
    }
    c.args.reserve(arg_names.size() + job_args);
    // A plain job without constraints that the master asks to take is packed running, as
    // pushJobs stores it when it takes it: the script then stores the argument as given, and
    // cuts it (a Lua string made per cut, hashed byte by byte) only when it cannot take it.
    const std::string queued =
        push_tail(PushedAs::queued, a.now_ms, a.ready_stamp_us, a.traceparent);
    const std::string running =
        a.take.empty()
            ? std::string()
            : push_tail(PushedAs::running, a.now_ms, a.ready_stamp_us, a.traceparent, a.taken_by);
    c.args.push_back(arg(a.now_ms));
    c.args.push_back(arg(a.ready_stamp_us));
    c.args.push_back(std::move(a.channel));
    c.args.push_back(std::move(a.traceparent));
    c.args.push_back(arg(a.shard));
    c.args.push_back(arg(a.max_list_bytes));
    c.args.push_back(a.take);  // read again below, per job
    c.args.push_back(std::move(shapes));
    c.args.push_back(a.take.empty() ? std::string() : std::move(a.taken_by));
    for (std::size_t i = 0; i < a.jobs.size(); ++i) {
      Job& j = a.jobs[i];
      const RecordHead head{j.name,      j.argument,    j.priority,
                            j.max_retry, j.keep_result, j.timeout_ms};
      const bool plain = is_plain(j);
      const bool taking = plain && !a.take.empty() && a.take[i] == '1' && j.constraints.empty();
      std::string record =
          plain ? plain_record(head, taking ? running : queued, j.constraints) : record_head(head);
      c.args.push_back(std::move(j.name));  // after `head` was read from it
      c.args.push_back(std::move(record));
      c.args.push_back(arg(std::int64_t{j.priority}));
      if (plain) {
        c.args.push_back(arg(j.timeout_ms));
        continue;
      }
      c.args.push_back(arg(j.max_retry));
      c.args.push_back(arg(j.keep_result));
      c.args.push_back(arg(j.timeout_ms));
      c.args.push_back(arg(j.ready_at_ms));
      c.args.push_back(std::move(j.unique_key));
      c.args.push_back(arg(j.unique_until_started));
      c.args.push_back(arg(j.unique_for_ms));
      c.args.push_back(std::move(j.ordering_key));
      c.args.push_back(std::move(j.constraints));
      c.args.push_back(arg(static_cast<std::int64_t>(j.on_duplicate)));
    }
    return c;
  }
  // `jobs` is how many were pushed.
  static Decoded<Pushed> decode(const Reply& reply, std::size_t jobs) {
    if (!reply.is_array() || reply.elements.size() != 4 || !reply.elements[0].is_array() ||
        reply.elements[0].elements.size() != jobs || !reply.elements[1].is_array() ||
        !reply.elements[2].is_array() || !reply.elements[3].is_array() ||
        reply.elements[3].elements.size() % 2 != 0) {
      return unexpected(
          bad_reply(id, "not {fields (one per job), duplicates, merged, taken}", reply));
    }
    Pushed out;
    out.fields.reserve(jobs);
    for (const Reply& f : reply.elements[0].elements) {
      if (f.type != Reply::Type::string) return unexpected(bad_reply(id, "a field", reply));
      out.fields.push_back(f.str);
    }
    for (int list = 1; list <= 2; ++list) {
      auto& positions = list == 1 ? out.duplicates : out.merged;
      for (const Reply& d : reply.elements[list].elements) {
        const auto at = d.as_integer();
        if (!at || *at < 0 || static_cast<std::size_t>(*at) >= jobs) {
          return unexpected(bad_reply(id, "a duplicate's position", reply));
        }
        positions.push_back(static_cast<std::size_t>(*at));
      }
    }
    const auto& taken = reply.elements[3].elements;
    for (std::size_t i = 0; i < taken.size(); i += 2) {
      const auto at = taken[i].as_integer();
      if (!at || *at < 0 || static_cast<std::size_t>(*at) >= jobs ||
          taken[i + 1].type != Reply::Type::string) {
        return unexpected(bad_reply(id, "a taken job's position and record", reply));
      }
      out.taken.push_back(Taken{static_cast<std::size_t>(*at), taken[i + 1].str});
    }
    return out;
  }
};

}  // namespace jq::redis::bindings
