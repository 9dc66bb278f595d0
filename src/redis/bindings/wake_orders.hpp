// What releaseLeases, ackWake and wakeConstraints answer (lua/lib/preamble_2_order_wakes.lua):
// wake orders, five values each, that the master runs with unholdJobs in the shard named.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/redis/bindings/binding.hpp"

namespace jq::redis::bindings {

struct WakeOrder {
  std::string constraint;
  std::string key;
  std::int64_t shard = 0;
  std::int64_t n = 0;       // the most jobs to wake
  std::int64_t bound = -1;  // none younger than this ready stamp (µs); -1: no bound

  bool operator==(const WakeOrder&) const = default;
};

// The orders in `e` from index `first` on.
inline Decoded<std::vector<WakeOrder>> wake_orders(ScriptId id, std::vector<Reply>& e,
                                                   std::size_t first, const Reply& reply) {
  if (e.size() < first || (e.size() - first) % 5 != 0) {
    return unexpected(bad_reply(id, "wake orders are not five values each", reply));
  }
  std::vector<WakeOrder> out;
  out.reserve((e.size() - first) / 5);
  for (std::size_t i = first; i < e.size(); i += 5) {
    auto shard = e[i + 2].as_integer();
    if (e[i].type != Reply::Type::string || e[i + 1].type != Reply::Type::string || !shard ||
        !e[i + 3].is_integer() || !e[i + 4].is_integer()) {
      return unexpected(bad_reply(id, "a wake order is not {name, key, shard, n, bound}", reply));
    }
    out.push_back(WakeOrder{std::move(e[i].str), std::move(e[i + 1].str), *shard, e[i + 3].integer,
                            e[i + 4].integer});
  }
  return out;
}

}  // namespace jq::redis::bindings
