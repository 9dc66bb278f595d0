// Why a Redis command did not produce a reply.
#pragma once

#include <system_error>

namespace jq::redis {

enum class Errc {
  not_connected = 1,  // no connection right now; the client is reconnecting
  connection_lost,    // the connection broke before the reply arrived (the command may have run)
  protocol_error,     // the server sent bytes that are not RESP
  timed_out,          // no reply within the command timeout; the connection was reset
  shutting_down,      // the client was stopped
};

const std::error_category& redis_category();
inline std::error_code make_error_code(Errc e) {
  return {static_cast<int>(e), redis_category()};
}

}  // namespace jq::redis

template <>
struct std::is_error_code_enum<jq::redis::Errc> : std::true_type {};
