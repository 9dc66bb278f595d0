// lua/readHeads-2.lua: the heads of several queues of one shard, as reserveJobs with max 0
// answers each.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/bindings/reserve_jobs.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct ReadHeads {
  static constexpr ScriptId id = ScriptId::read_heads;
  static constexpr std::array<std::string_view, 2> key_names = {"jobs", "ready_prefix"};
  static constexpr std::array<std::string_view, 0> arg_names = {};
  static constexpr std::size_t args_per_item = 1;  // one per name

  struct Keys {
    std::string jobs, ready_prefix;
  };
  struct Args {
    std::vector<std::string> names;
  };
  using Head = ReserveJobs::Head;

  static Keys keys(const redis::Keys& k, int shard) {
    return {k.jobs_prefix(shard), k.ready_prefix(shard)};
  }
  static ScriptCall call(Keys k, Args a) {
    return {id, {std::move(k.jobs), std::move(k.ready_prefix)}, std::move(a.names)};
  }
  // One head per name, in the order given; nullopt: the queue is empty.
  static Decoded<std::vector<std::optional<Head>>> decode(Reply reply, std::size_t names) {
    auto& e = reply.elements;
    if (!reply.is_array() || e.size() != 2 * names) {
      return unexpected(bad_reply(id, "not {member, priority} per name", reply));
    }
    std::vector<std::optional<Head>> out(names);
    for (std::size_t i = 0; i < names; ++i) {
      auto h = ReserveJobs::head(id, e[2 * i], e[2 * i + 1], reply);
      if (!h) return unexpected(std::move(h.error()));
      out[i] = std::move(*h);
    }
    return out;
  }
};

}  // namespace jq::redis::bindings
