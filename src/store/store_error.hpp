// Why a store operation did not happen, as a value (the HTTP layer maps it to a status).
#pragma once

#include <string>
#include <system_error>

namespace jq::store {

enum class StoreErrc {
  not_found,
  conflict,     // the job's state does not allow the change (running, finished)
  unavailable,  // Redis cannot be reached right now
  internal,     // Redis answered something a correct store never holds
};

struct StoreError {
  StoreErrc code = StoreErrc::internal;
  std::string message;  // for the user: what happened and what to do

  static StoreError unavailable(const std::error_code& cause);
  static StoreError internal(std::string detail);
};

}  // namespace jq::store
