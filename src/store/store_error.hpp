// Why a store operation did not happen, as a value (the HTTP layer maps it to a status).
#pragma once

#include <string>
#include <string_view>
#include <system_error>

#include "src/redis/bindings/binding.hpp"
#include "src/redis/reply.hpp"

namespace jq::store {

enum class StoreErrc {
  not_found,
  conflict,       // the job's state does not allow the change (running, finished)
  unavailable,    // Redis cannot be reached or cannot serve right now (redis::Errc)
  out_of_memory,  // Redis is above its maxmemory and refused the change; nothing of it was made
  internal,       // Redis answered something a correct store never holds
};

struct StoreError {
  StoreErrc code = StoreErrc::internal;
  std::string message;  // for the user: what happened and what to do

  // unavailable, or out_of_memory when `cause` is Redis's -OOM refusal.
  static StoreError unavailable(const std::error_code& cause);
  static StoreError internal(std::string detail);
  // internal() for a reply of `what` (a script, a pipeline) that a correct store never gives.
  static StoreError bad_reply(std::string_view what, const redis::Reply& reply);
  // internal() for a script reply its binding could not read.
  static StoreError bad_reply(const redis::bindings::BadReply& bad);
};

}  // namespace jq::store
