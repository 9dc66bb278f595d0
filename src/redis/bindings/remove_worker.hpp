// lua/removeWorker-4.lua: deletes a worker's registration with its slot holdings and stats.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct RemoveWorker {
  static constexpr ScriptId id = ScriptId::remove_worker;
  static constexpr std::array<std::string_view, 4> key_names = {"workers", "worker_urls", "slots",
                                                                "stats"};
  static constexpr std::array<std::string_view, 2> arg_names = {"id", "channel"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string workers, worker_urls, slots, stats;
  };
  struct Args {
    std::string id;
    std::string channel;
  };
  enum class Status : std::int64_t { removed = 1, not_found = -1 };
  static constexpr std::array statuses = {Status::removed, Status::not_found};

  static Keys keys(const redis::Keys& k, std::string_view worker_id) {
    return {k.workers(), k.worker_urls(), k.worker_slots(worker_id), k.worker_stats(worker_id)};
  }
  static ScriptCall call(Keys k, Args a) {
    return {
        id,
        {std::move(k.workers), std::move(k.worker_urls), std::move(k.slots), std::move(k.stats)},
        {std::move(a.id), std::move(a.channel)}};
  }
  static Decoded<Status> decode(const Reply& reply) { return integer_status(id, statuses, reply); }
};

}  // namespace jq::redis::bindings
