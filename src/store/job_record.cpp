#include "src/store/job_record.hpp"

#include <msgpack.hpp>

#include "api/msgpack_reader.hpp"
#include "src/store/msgpack_values.hpp"

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
  kSchedule,     // R_SCHEDULE: [name, scheduled_at] or false
  kAppended,     // R_APPENDED: values an appended argument lists, 0 for none
};

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
    if (root.via.array.size > kSchedule && s[kSchedule].type == msgpack::type::ARRAY &&
        s[kSchedule].via.array.size == 2) {
      r.schedule = as_string(s[kSchedule].via.array.ptr[0]);
      r.scheduled_at = as_string(s[kSchedule].via.array.ptr[1]);
    }
    if (root.via.array.size > kAppended) r.appended = static_cast<int>(as_int(s[kAppended]));
    // Each later slot on its own: a record ends at its last slot that is not "none"
    // (pack_record in lua/lib/preamble.lua).
    const auto has = [&root](Slot slot) { return root.via.array.size > slot; };
    if (has(kUniqueKey)) r.unique_key = as_string(s[kUniqueKey]);
    if (has(kOrderingKey)) r.ordering_key = as_string(s[kOrderingKey]);
    if (has(kReadyAtMs)) r.ready_at_ms = as_int(s[kReadyAtMs]);
    if (has(kBlockedBy)) r.blocked_by = as_string(s[kBlockedBy]);
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string_view match_argument(const JobRecord& record) {
  if (record.appended <= 0) return record.argument;
  api::MsgpackReader list(record.argument);
  const auto elements = list.read_array_header();
  if (!elements || *elements == 0) return record.argument;
  for (std::uint32_t i = 1; i < *elements; ++i) {
    if (!list.skip()) return record.argument;
  }
  return list.skip().value_or(record.argument);
}

}  // namespace jq::store
