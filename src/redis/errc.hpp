// Why a Redis command did not produce a usable reply: the connection failed, or Redis answered
// with an error that says it cannot serve the command right now (a transient state of the
// server, not a mistake in the command).
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <system_error>

namespace jq::redis {

enum class Errc {
  not_connected = 1,  // no connection right now; the client is reconnecting
  connection_lost,    // the connection broke before the reply arrived (the command may have run)
  protocol_error,     // the server sent bytes that are not RESP
  timed_out,          // no reply within the command timeout; the connection was reset
  shutting_down,      // the client was stopped
  // Refusals: Redis ran nothing of the command (a script is refused before its first line).
  out_of_memory,   // -OOM: used memory is above maxmemory and the command could add to it
  loading,         // -LOADING: Redis is loading its data set after a start
  busy,            // -BUSY: a script has run longer than busy-reply-threshold
  read_only,       // -READONLY: a replica, e.g. the old primary after a failover
  master_down,     // -MASTERDOWN: a replica that lost its primary and serves no stale data
  cannot_persist,  // -MISCONF: the last RDB or AOF write failed, so Redis refuses writes
  no_replicas,     // -NOREPLICAS: fewer good replicas than min-replicas-to-write
  // Redis Cluster (redis::Cluster), after its bounded retries: nothing of the command ran.
  cluster_down,  // the slot's node could not be reached or served it (failover, resharding)
  cross_slot,    // a script's keys are in several hash slots: a bug, refused before sending
  // WAIT (redis.replicas_ack): the write ran, but fewer replicas than asked confirmed it in time.
  not_replicated,
  // A new connection's AUTH, SELECT or script library was refused (a wrong password, a database
  // or command the server does not allow): the reconnects go on, as it may be fixed there.
  setup_refused,
};

const std::error_category& redis_category();
inline std::error_code make_error_code(Errc e) {
  return {static_cast<int>(e), redis_category()};
}

// The refusal an error reply's text stands for, by its first word ("OOM command not allowed
// ..."); nullopt for any other error (a script's own error, a wrong command).
std::optional<Errc> refusal_of(std::string_view error_text);

// Whether a command that failed with `error` may have run in Redis (its answer lost: the
// connection broke, a timeout, unreadable bytes), rather than refused before it ran or never
// sent. A call that may have run must not be taken back blindly: it may still take effect.
bool may_have_run(const std::error_code& error);

// A short, stable name for metrics labels: "oom", "connection_lost", ...; empty for an error
// that is not Redis's (another category) or not worth counting (shutting_down).
std::string_view error_kind(const std::error_code& ec);

// Every name error_kind() can give, for exposing their counters at zero.
std::span<const std::string_view> error_kinds();

}  // namespace jq::redis

template <>
struct std::is_error_code_enum<jq::redis::Errc> : std::true_type {};
