// What releaseLeases, ackWake and wakeConstraints answer (lua/lib/preamble_2_order_wakes.lua):
// wake orders, five values each, that the master runs with unholdJobs in the shard named; and
// what releaseLeases and wakeConstraints are given to run them themselves, on one Redis.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct WakeOrder {
  std::string constraint;
  std::string key;
  std::int64_t shard = 0;
  std::int64_t n = 0;       // the most jobs to wake
  std::int64_t bound = -1;  // none younger than this ready stamp (µs); -1: no bound

  bool operator==(const WakeOrder&) const = default;
};

// A {c} script's optional keys and arguments for running its wake orders in the same step
// (lua/lib/preamble_5_run_wakes.lua), which only one Redis allows: shard 0's keys, which name
// every shard's (lua/lib/preamble_1_shard_keys_like.lua), and the channels. All empty: not given.
struct RunWakesHere {
  std::string jobs_prefix, ready_prefix, held_prefix;  // KEYS, after the script's own
  std::string channel, constraint_channel;             // ARGV ("" when not given)

  static RunWakesHere of(const redis::Keys& k) {
    return {k.jobs_prefix(0), k.ready_prefix(0), k.held_prefix(0), k.events_channel(0),
            k.constraint_channel()};
  }
  void append_keys(std::vector<std::string>& keys) {
    if (jobs_prefix.empty()) return;
    keys.push_back(std::move(jobs_prefix));
    keys.push_back(std::move(ready_prefix));
    keys.push_back(std::move(held_prefix));
  }
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
