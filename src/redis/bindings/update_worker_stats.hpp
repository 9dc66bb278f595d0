// lua/updateWorkerStats-2.lua: a master's counts of attempts and its health marks, written to
// the stats of the workers still registered.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct UpdateWorkerStats {
  static constexpr ScriptId id = ScriptId::update_worker_stats;
  static constexpr std::array<std::string_view, 2> key_names = {"workers", "stats_prefix"};
  static constexpr std::array<std::string_view, 1> arg_names = {"channel"};
  static constexpr std::size_t args_per_item = 7;  // then seven per worker (Worker)

  struct Keys {
    std::string workers, stats_prefix;
    std::string channel;  // not a key: ARGV (a busy mark is announced there)
  };
  struct Worker {
    std::string id;
    std::int64_t ended = 0;  // attempts ended (dispatched), of them:
    std::int64_t succeeded = 0;
    std::int64_t failed = 0;
    std::string last_error{};                     // empty: left as it is
    std::optional<std::int64_t> down_until_ms{};  // nullopt: left as it is
    std::optional<std::int64_t> busy_until_ms{};
  };
  struct Args {
    std::vector<Worker> workers;
  };

  static Keys keys(const redis::Keys& k) {
    return {k.workers(), k.worker_stats_prefix(), k.control_channel()};
  }
  static ScriptCall call(Keys k, Args a) {
    ScriptCall c{id, {std::move(k.workers), std::move(k.stats_prefix)}, {}};
    c.args.reserve(1 + a.workers.size() * args_per_item);
    c.args.push_back(std::move(k.channel));
    for (Worker& w : a.workers) {
      c.args.push_back(std::move(w.id));
      c.args.push_back(arg(w.ended));
      c.args.push_back(arg(w.succeeded));
      c.args.push_back(arg(w.failed));
      c.args.push_back(std::move(w.last_error));
      c.args.push_back(w.down_until_ms ? arg(*w.down_until_ms) : std::string());
      c.args.push_back(w.busy_until_ms ? arg(*w.busy_until_ms) : std::string());
    }
    return c;
  }
  // How many were still registered.
  static Decoded<std::int64_t> decode(const Reply& reply) { return integer_reply(id, reply); }
};

}  // namespace jq::redis::bindings
