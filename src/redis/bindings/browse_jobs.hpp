// lua/browseJobs-6.lua: one page of one shard's jobs in one state (GET /v1/jobs). Changes nothing.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct BrowseJobs {
  static constexpr ScriptId id = ScriptId::browse_jobs;
  static constexpr std::array<std::string_view, 6> key_names = {
      "names", "ready prefix", "scheduled", "inflight", "dead", "jobs prefix"};
  static constexpr std::array<std::string_view, 7> arg_names = {
      "state", "name", "limit", "shard", "cursor score", "cursor member", "cursor shard"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string names, ready_prefix, scheduled, inflight, dead, jobs;
  };
  // Where the previous page ended: its last job's place in the listing's order.
  struct Cursor {
    std::int64_t score = 0;  // queued: the priority; otherwise due, deadline or failure ms
    std::string member;      // queued: ready stamp and field; otherwise the field
    int shard = 0;
  };
  struct Args {
    std::string state;  // queued | scheduled | running | dead
    std::string name;   // '' for any
    std::int64_t limit = 0;
    int shard = 0;
    std::optional<Cursor> after;  // none: the first page
  };
  struct Entry {
    std::int64_t score = 0;
    std::string member;
    std::string record;  // MessagePack
  };

  static Keys keys(const redis::Keys& k, int shard) {
    return {k.names(shard),    k.ready_prefix(shard), k.scheduled(shard),
            k.inflight(shard), k.dead(shard),         k.jobs_prefix(shard)};
  }
  static ScriptCall call(Keys k, Args a) {
    return {
        id,
        {std::move(k.names), std::move(k.ready_prefix), std::move(k.scheduled),
         std::move(k.inflight), std::move(k.dead), std::move(k.jobs)},
        {std::move(a.state), std::move(a.name), arg(a.limit), arg(std::int64_t{a.shard}),
         a.after ? arg(a.after->score) : std::string(), a.after ? a.after->member : std::string(),
         a.after ? arg(std::int64_t{a.after->shard}) : std::string()}};
  }
  // The shard's jobs, and where its scan stopped when its budget ran out before `limit` were
  // found: every entry up to there was looked at, none after it.
  struct Page {
    std::vector<Entry> entries;
    std::optional<Cursor> reached;  // its shard is the shard asked
  };
  static Decoded<Page> decode(const Reply& reply, int shard) {
    const auto& e = reply.elements;
    if (!reply.is_array() || e.size() % 3 == 1) {
      return unexpected(bad_reply(id, "not {score, member, record, ...[, score, member]}", reply));
    }
    Page out;
    const std::size_t whole = e.size() - e.size() % 3;
    out.entries.reserve(whole / 3);
    for (std::size_t i = 0; i < whole; i += 3) {
      if (!e[i].is_integer()) return unexpected(bad_reply(id, "a score", reply));
      out.entries.push_back(Entry{e[i].integer, e[i + 1].str, e[i + 2].str});
    }
    if (whole < e.size()) {
      if (!e[whole].is_integer()) return unexpected(bad_reply(id, "the reached score", reply));
      out.reached = Cursor{e[whole].integer, e[whole + 1].str, shard};
    }
    return out;
  }
};

}  // namespace jq::redis::bindings
