#include "src/store/job_record.hpp"

#include <msgpack.hpp>

namespace jq::store {
namespace {

// Slots of the record array, 0-based (the Lua side counts from 1).
enum Slot : std::size_t {
  kName,
  kArgument,
  kPriority,
  kMaxRetry,
  kKeepResult,
  kTimeoutMs,
  kState,
  kAttempts,
  kEnqueuedAtMs,
  kReadyStamp,  // R_READY_STAMP: when it last became ready
  kLastError,
  kTraceparent,
  kResult,
  kSlots,  // every record has these; the ones below came later (absent: their "none" value)
  kUniqueKey = kSlots,
  kUniqueUntil,
  kOrderingKey,
  kReadyAtMs,  // R_READY_AT_MS: when a scheduled job is due
  kBlockedBy,
  kConstraints,  // R_CONSTRAINTS: [name1, key1, ...] or false
};

std::string as_string(const msgpack::object& o) {
  if (o.type == msgpack::type::STR) return std::string(o.via.str.ptr, o.via.str.size);
  if (o.type == msgpack::type::BIN) return std::string(o.via.bin.ptr, o.via.bin.size);
  return {};
}

std::int64_t as_int(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::POSITIVE_INTEGER:
      return static_cast<std::int64_t>(o.via.u64);
    case msgpack::type::NEGATIVE_INTEGER:
      return o.via.i64;
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64:
      return static_cast<std::int64_t>(o.via.f64);
    default:
      return 0;
  }
}

}  // namespace

std::optional<JobRecord> decode_record(std::string_view packed) {
  try {
    msgpack::object_handle handle = msgpack::unpack(packed.data(), packed.size());
    const msgpack::object& root = handle.get();
    if (root.type != msgpack::type::ARRAY || root.via.array.size < kSlots) return std::nullopt;
    const msgpack::object* s = root.via.array.ptr;
    auto state = job_state_from_int(as_int(s[kState]));
    if (!state) return std::nullopt;
    JobRecord r;
    r.name = as_string(s[kName]);
    r.argument = as_string(s[kArgument]);
    r.priority = static_cast<std::int32_t>(as_int(s[kPriority]));
    r.max_retry = static_cast<int>(as_int(s[kMaxRetry]));
    r.keep_result = as_int(s[kKeepResult]) != 0;
    r.timeout_ms = as_int(s[kTimeoutMs]);
    r.state = *state;
    r.attempts = static_cast<int>(as_int(s[kAttempts]));
    r.enqueued_at_ms = as_int(s[kEnqueuedAtMs]);
    r.ready_stamp = as_string(s[kReadyStamp]);
    r.last_error = as_string(s[kLastError]);
    r.traceparent = as_string(s[kTraceparent]);
    r.result = as_string(s[kResult]);
    if (root.via.array.size > kConstraints && s[kConstraints].type == msgpack::type::ARRAY) {
      const msgpack::object_array& list = s[kConstraints].via.array;
      for (std::uint32_t i = 0; i < list.size; ++i) r.constraints.push_back(as_string(list.ptr[i]));
    }
    if (root.via.array.size >= kBlockedBy + 1) {
      r.unique_key = as_string(s[kUniqueKey]);
      r.ordering_key = as_string(s[kOrderingKey]);
      r.ready_at_ms = as_int(s[kReadyAtMs]);
      r.blocked_by = as_string(s[kBlockedBy]);
    }
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace jq::store
