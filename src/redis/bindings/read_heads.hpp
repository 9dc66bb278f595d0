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
  // One head per name, in the order given; nullopt: the queue is empty. The script answers only
  // the heads it found, each after its name's position.
  static Decoded<std::vector<std::optional<Head>>> decode(Reply reply, std::size_t names) {
    auto& e = reply.elements;
    if (!reply.is_array() || e.size() % 3 != 0) {
      return unexpected(bad_reply(id, "not {position, member, priority} per head found", reply));
    }
    std::vector<std::optional<Head>> out(names);
    for (std::size_t i = 0; i < e.size(); i += 3) {
      const auto at = e[i].as_integer();
      if (!at || *at < 0 || static_cast<std::size_t>(*at) >= names ||
          out[static_cast<std::size_t>(*at)]) {
        return unexpected(bad_reply(id, "a position out of range or answered twice", reply));
      }
      auto h = ReserveJobs::head(id, e[i + 1], e[i + 2], reply);
      if (!h) return unexpected(std::move(h.error()));
      if (!*h) return unexpected(bad_reply(id, "an empty head answered", reply));
      out[static_cast<std::size_t>(*at)] = std::move(*h);
    }
    return out;
  }
};

}  // namespace jq::redis::bindings
