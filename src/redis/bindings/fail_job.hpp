// lua/failJob-10.lua: a failed attempt schedules a retry or makes the job dead.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/bindings/retry_args.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct FailJob {
  static constexpr ScriptId id = ScriptId::fail_job;
  static constexpr auto key_names = FailKeys::names;
  static constexpr std::array<std::string_view, 12> arg_names = {
      "field",         "attempt",      "failure", "should_retry", "message", "now_ms",
      "retry_base_ms", "retry_max_ms", "jitter",  "result_ttl_s", "channel", "shard"};
  static constexpr std::size_t args_per_item = 0;

  using Keys = FailKeys;
  struct Args {
    std::string field;
    std::int64_t attempt = 0;
    std::string failure;  // the failure object (MessagePack bytes)
    bool should_retry = false;
    std::string message;  // becomes last_error
    std::int64_t now_ms = 0;
    RetryArgs retry;
    std::string channel;
    std::int64_t shard = 0;
  };
  enum class Status : std::int64_t { stale = 0, scheduled = 1, dead = 2 };
  static constexpr std::array statuses = {Status::stale, Status::scheduled, Status::dead};
  struct Failed {
    Status status = Status::stale;
    std::int64_t due_ms = 0;  // scheduled: when the retry is due
  };

  static Keys keys(const redis::Keys& k, int shard) { return FailKeys::of(k, shard); }
  static ScriptCall call(Keys k, Args a) {
    return {id,
            std::move(k).list(),
            {std::move(a.field), arg(a.attempt), std::move(a.failure), arg(a.should_retry),
             std::move(a.message), arg(a.now_ms), arg(a.retry.base_ms), arg(a.retry.max_ms),
             jitter_arg(a.retry.jitter), arg(a.retry.result_ttl_s), std::move(a.channel),
             arg(a.shard)}};
  }
  static Decoded<Failed> decode(const Reply& reply) {
    auto n = integers_reply(id, reply);
    if (!n) return unexpected(std::move(n.error()));
    if (n->empty()) return unexpected(bad_reply(id, "empty", reply));
    auto status = status_of(id, (*n)[0], statuses, reply);
    if (!status) return unexpected(std::move(status.error()));
    const std::size_t size = *status == Status::scheduled ? 2 : 1;
    if (n->size() != size) return unexpected(bad_reply(id, "wrong length", reply));
    return Failed{*status, size == 2 ? (*n)[1] : 0};
  }
};

}  // namespace jq::redis::bindings
