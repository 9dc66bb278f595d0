// lua/getJob-2.lua: reads a job's record, live or finished.
#pragma once

#include "src/redis/bindings/one_job_read.hpp"

namespace jq::redis::bindings {

struct GetJob : OneJobRead<ScriptId::get_job> {
  // The packed record; nullopt when the job has none.
  static Decoded<std::optional<std::string>> decode(const Reply& reply) {
    if (reply.is_nil()) return std::optional<std::string>();
    if (reply.type != Reply::Type::string) return unexpected(bad_reply(id, "no record", reply));
    return std::optional<std::string>(reply.str);
  }
};

}  // namespace jq::redis::bindings
