// lua/fetchResult-2.lua: hands a finished job's kept result to the pusher exactly once.
#pragma once

#include "src/redis/bindings/one_job_read.hpp"

namespace jq::redis::bindings {

struct FetchResult : OneJobRead<ScriptId::fetch_result> {
  enum class Status : std::int64_t { nothing = 0, result = 1, pending = 2 };
  static constexpr std::array statuses = {Status::nothing, Status::result, Status::pending};
  struct Fetched {
    Status status = Status::nothing;
    std::string result;         // result: the result object (MessagePack)
    std::int64_t state = 0;     // pending: the job's state (src/store/job_state.hpp numbers)
    std::int64_t attempts = 0;  // pending
    bool keep_result = false;   // pending: a result will be stored
  };

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
