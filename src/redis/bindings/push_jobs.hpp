// lua/pushJobs-5.lua: stores a batch of new jobs in one shard and makes them ready.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct PushJobs {
  static constexpr ScriptId id = ScriptId::push_jobs;
  static constexpr std::array<std::string_view, 5> key_names = {"stats", "jobs", "names",
                                                                "ready_prefix", "counts"};
  static constexpr std::array<std::string_view, 5> arg_names = {"now_ms", "ready_stamp_us",
                                                                "channel", "traceparent", "shard"};
  static constexpr std::size_t args_per_item = 6;  // then six per job (Job)

  struct Keys {
    std::string stats, jobs, names, ready_prefix, counts;
  };
  struct Job {
    std::string name;
    std::string argument;  // MessagePack bytes
    std::int32_t priority = 0;
    std::int64_t max_retry = 0;
    bool keep_result = false;
    std::int64_t timeout_ms = 0;
  };
  struct Args {
    std::int64_t now_ms = 0;
    std::int64_t ready_stamp_us = 0;
    std::string channel;
    std::string traceparent;  // '' for none
    std::int64_t shard = 0;
    std::vector<Job> jobs;
  };

  static Keys keys(const redis::Keys& k, int shard) {
    return {k.stats(shard), k.jobs_prefix(shard), k.names(shard), k.ready_prefix(shard),
            k.counts(shard)};
  }
  static ScriptCall call(Keys k, Args a) {
    ScriptCall c{id,
                 {std::move(k.stats), std::move(k.jobs), std::move(k.names),
                  std::move(k.ready_prefix), std::move(k.counts)},
                 {}};
    c.args.reserve(arg_names.size() + a.jobs.size() * args_per_item);
    c.args.push_back(arg(a.now_ms));
    c.args.push_back(arg(a.ready_stamp_us));
    c.args.push_back(std::move(a.channel));
    c.args.push_back(std::move(a.traceparent));
    c.args.push_back(arg(a.shard));
    for (Job& j : a.jobs) {
      c.args.push_back(std::move(j.name));
      c.args.push_back(std::move(j.argument));
      c.args.push_back(arg(std::int64_t{j.priority}));
      c.args.push_back(arg(j.max_retry));
      c.args.push_back(arg(j.keep_result));
      c.args.push_back(arg(j.timeout_ms));
    }
    return c;
  }
  // The new jobs' fields, in the order given; `jobs` is how many were pushed.
  static Decoded<std::vector<std::string>> decode(const Reply& reply, std::size_t jobs) {
    if (!reply.is_array() || reply.elements.size() != jobs) {
      return unexpected(bad_reply(id, "not one field per job", reply));
    }
    std::vector<std::string> fields;
    fields.reserve(jobs);
    for (const Reply& f : reply.elements) {
      if (f.type != Reply::Type::string) return unexpected(bad_reply(id, "a field", reply));
      fields.push_back(f.str);
    }
    return fields;
  }
};

}  // namespace jq::redis::bindings
