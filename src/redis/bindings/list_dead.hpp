// lua/listDead-2.lua: the dead jobs of one shard, newest first. Changes nothing.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct ListDead {
  static constexpr ScriptId id = ScriptId::list_dead;
  static constexpr std::array<std::string_view, 2> key_names = {"dead", "jobs"};
  static constexpr std::array<std::string_view, 2> arg_names = {"name", "limit"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string dead, jobs;
  };
  struct Args {
    std::string name;  // '' for any
    std::int64_t limit = 0;
  };
  struct Dead {
    std::string field;
    std::int64_t failed_at_ms = 0;
    std::string record;  // MessagePack, the failure object in its result
  };

  static Keys keys(const redis::Keys& k, int shard) {
    return {k.dead(shard), k.jobs_prefix(shard)};
  }
  static ScriptCall call(Keys k, Args a) {
    return {id, {std::move(k.dead), std::move(k.jobs)}, {std::move(a.name), arg(a.limit)}};
  }
  static Decoded<std::vector<Dead>> decode(const Reply& reply) {
    const auto& e = reply.elements;
    if (!reply.is_array() || e.size() % 3 != 0) {
      return unexpected(bad_reply(id, "not {field, failed_at_ms, record, ...}", reply));
    }
    std::vector<Dead> out;
    out.reserve(e.size() / 3);
    for (std::size_t i = 0; i < e.size(); i += 3) {
      if (!e[i + 1].is_integer()) return unexpected(bad_reply(id, "a failure time", reply));
      out.push_back(Dead{e[i].str, e[i + 1].integer, e[i + 2].str});
    }
    return out;
  }
};

}  // namespace jq::redis::bindings
