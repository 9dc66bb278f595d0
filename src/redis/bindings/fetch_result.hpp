// lua/fetchResult-3.lua: hands a finished job's kept result to the pusher exactly once, and marks
// the job watched for a pusher about to wait for it.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct FetchResult {
  static constexpr ScriptId id = ScriptId::fetch_result;
  static constexpr std::array<std::string_view, 3> key_names = {"jobs", "done", "watch"};
  static constexpr std::array<std::string_view, 2> arg_names = {"field", "watch_ms"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string jobs, done, watch;
  };
  struct Args {
    std::string field;
    std::int64_t watch_ms = 0;  // 0: nobody waits
  };

  enum class Status : std::int64_t { nothing = 0, result = 1, pending = 2 };
  static constexpr std::array statuses = {Status::nothing, Status::result, Status::pending};
  struct Fetched {
    Status status = Status::nothing;
    std::string result;         // result: the result object (MessagePack)
    std::int64_t state = 0;     // pending: the job's state (src/store/job_state.hpp numbers)
    std::int64_t attempts = 0;  // pending
    bool keep_result = false;   // pending: a result will be stored
  };

  static Keys keys(const redis::Keys& k, int shard, std::string_view field) {
    return {k.jobs_prefix(shard), k.done(shard, field), k.watch(shard, field)};
  }
  static ScriptCall call(Keys k, Args a) {
    return {id,
            {std::move(k.jobs), std::move(k.done), std::move(k.watch)},
            {std::move(a.field), arg(a.watch_ms)}};
  }

  static Decoded<Fetched> decode(const Reply& reply) {
    const auto& e = reply.elements;
    if (!reply.is_array() || e.empty() || !e[0].is_integer()) {
      return unexpected(bad_reply(id, "no status", reply));
    }
    auto status = status_of(id, e[0].integer, statuses, reply);
    if (!status) return unexpected(std::move(status.error()));
    Fetched out{*status, {}, 0, 0, false};
    const std::size_t size[] = {1, 2, 4};  // by status
    if (e.size() != size[e[0].integer]) return unexpected(bad_reply(id, "wrong length", reply));
    if (out.status == Status::result) out.result = e[1].str;
    if (out.status == Status::pending) {
      if (!e[1].is_integer() || !e[2].is_integer() || !e[3].is_integer()) {
        return unexpected(bad_reply(id, "pending without its numbers", reply));
      }
      out.state = e[1].integer;
      out.attempts = e[2].integer;
      out.keep_result = e[3].integer == 1;
    }
    return out;
  }
};

}  // namespace jq::redis::bindings
