#include "src/store/store_error.hpp"

#include <spdlog/spdlog.h>

#include "src/redis/errc.hpp"

namespace jq::store {

StoreError StoreError::unavailable(const std::error_code& cause) {
  if (cause == redis::Errc::out_of_memory) {
    return {StoreErrc::out_of_memory,
            "Redis is out of memory (its used memory is above maxmemory) and refused the change. "
            "Retry later; to make room, raise Redis's maxmemory or free space: fetch kept "
            "results, delete dead jobs, let workers finish the queued jobs"};
  }
  if (cause == redis::Errc::not_replicated) {
    return {StoreErrc::unavailable,
            "the jobs were stored, but fewer Redis replicas than redis.replicas_ack confirmed "
            "them in time, so a Redis failover now could lose them; pushing again is safe but may "
            "store them twice (at-least-once)"};
  }
  return {StoreErrc::unavailable,
          "the job store is unavailable (" + cause.message() + "); retry in a moment"};
}

StoreError StoreError::internal(std::string detail) {
  spdlog::error("store: {}", detail);
  return {StoreErrc::internal, "the job store answered unexpectedly; see the master's log"};
}

StoreError StoreError::bad_reply(std::string_view what, const redis::Reply& reply) {
  return internal(std::string(what) + " answered: " + reply.str);
}

StoreError StoreError::bad_reply(const redis::bindings::BadReply& bad) {
  return internal(bad.message());
}

}  // namespace jq::store
