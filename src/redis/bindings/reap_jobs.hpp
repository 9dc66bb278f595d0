// lua/reapJobs-10.lua: fails attempts whose deadline passed without an answer, as timeouts.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/bindings/retry_args.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct ReapJobs {
  static constexpr ScriptId id = ScriptId::reap_jobs;
  static constexpr auto key_names = FailKeys::names;
  static constexpr std::array<std::string_view, 11> arg_names = {
      "cutoff_ms",    "now_ms", "max",          "failure", "message", "retry_base_ms",
      "retry_max_ms", "jitter", "result_ttl_s", "channel", "shard"};
  static constexpr std::size_t args_per_item = 0;

  using Keys = FailKeys;
  struct Args {
    std::int64_t cutoff_ms = 0;  // attempts with a deadline before it are reaped
    std::int64_t now_ms = 0;
    std::int64_t max = 0;
    std::string failure;  // the timeout failure object (MessagePack bytes)
    std::string message;  // becomes last_error
    RetryArgs retry;
    std::string channel;
    std::int64_t shard = 0;
  };

  static Keys keys(const redis::Keys& k, int shard) { return FailKeys::of(k, shard); }
  static ScriptCall call(Keys k, Args a) {
    return {
        id,
        std::move(k).list(),
        {arg(a.cutoff_ms), arg(a.now_ms), arg(a.max), std::move(a.failure), std::move(a.message),
         arg(a.retry.base_ms), arg(a.retry.max_ms), jitter_arg(a.retry.jitter),
         arg(a.retry.result_ttl_s), std::move(a.channel), arg(a.shard)}};
  }
  // A reaped attempt of a job that matched constraints: its leases are to be released.
  struct Lease {
    std::string lease;        // "<shard>-<field>:<attempt>"
    std::string constraints;  // MessagePack [name1, key1, ...]
  };
  struct Reaped {
    std::int64_t reaped = 0;
    std::vector<Lease> leases;
  };
  static Decoded<Reaped> decode(Reply reply) {
    auto& e = reply.elements;
    if (!reply.is_array() || e.empty() || !e[0].is_integer() || e.size() % 2 != 1) {
      return unexpected(bad_reply(id, "not {reaped, lease, constraints, ...}", reply));
    }
    Reaped out{e[0].integer, {}};
    out.leases.reserve(e.size() / 2);
    for (std::size_t i = 1; i < e.size(); i += 2) {
      out.leases.push_back(Lease{std::move(e[i].str), std::move(e[i + 1].str)});
    }
    return out;
  }
};

}  // namespace jq::redis::bindings
