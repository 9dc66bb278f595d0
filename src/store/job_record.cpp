#include "src/store/job_record.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/msgpack_reader.hpp"

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

// The scalars Lua's cmsgpack writes into records: strings (as str, or bin) and numbers (whole
// ones as integers, others as doubles). Anything else reads as empty or 0, as before the slot
// existed. nullopt: the bytes end early or are not MessagePack.
std::optional<std::string> read_string(api::MsgpackReader& in) {
  switch (in.peek()) {
    case api::MsgpackKind::str:
      if (auto s = in.read_str()) return std::string(*s);
      return std::nullopt;
    case api::MsgpackKind::bin:
      if (auto b = in.read_bin()) return std::string(*b);
      return std::nullopt;
    default:
      if (!in.skip()) return std::nullopt;
      return std::string();
  }
}

std::optional<std::int64_t> read_number(api::MsgpackReader& in) {
  switch (in.peek()) {
    case api::MsgpackKind::integer:
      if (auto i = in.read_int()) return i->value;
      return std::nullopt;
    case api::MsgpackKind::floating:
      if (auto d = in.read_float()) return static_cast<std::int64_t>(*d);
      return std::nullopt;
    default:
      if (!in.skip()) return std::nullopt;
      return 0;
  }
}

// A list of strings ([name1, key1, ...], [schedule, tick]); false (or anything else) is none.
std::optional<std::vector<std::string>> read_strings(api::MsgpackReader& in) {
  std::vector<std::string> out;
  if (in.peek() != api::MsgpackKind::array) {
    if (!in.skip()) return std::nullopt;
    return out;
  }
  const auto n = in.read_array_header();
  if (!n) return std::nullopt;
  out.reserve(*n);
  for (std::uint32_t i = 0; i < *n; ++i) {
    auto s = read_string(in);
    if (!s) return std::nullopt;
    out.push_back(std::move(*s));
  }
  return out;
}

// Read in one pass over the bytes, each slot straight into its field: unpacking into a
// msgpack-cxx object tree first (its zone allocated and freed per record) took about half of the
// 2,900 instructions a record cost, and every reserved job is one.
bool decode_into(std::string_view packed, JobRecord& r) {
  api::MsgpackReader in(packed);
  const auto slots = in.read_array_header();
  if (!slots || *slots < kSlots) return false;
  bool ok = true;
  auto text = [&](std::string& into) {
    auto s = ok ? read_string(in) : std::nullopt;
    ok = s.has_value();
    if (ok) into = std::move(*s);
  };
  auto number = [&]() -> std::int64_t {
    auto n = ok ? read_number(in) : std::nullopt;
    ok = n.has_value();
    return n.value_or(0);
  };
  text(r.name);
  text(r.argument);
  r.priority = static_cast<std::int32_t>(number());
  r.max_retry = static_cast<int>(number());
  r.keep_result = number() != 0;
  r.timeout_ms = number();
  const auto state = job_state_from_int(number());
  r.attempts = static_cast<int>(number());
  r.enqueued_at_ms = number();
  text(r.ready_stamp);
  text(r.last_error);
  text(r.traceparent);
  text(r.result);
  if (!ok || !state) return false;
  r.state = *state;
  // Each later slot on its own: a record ends at its last slot that is not "none"
  // (pack_record in lua/lib/preamble.lua).
  for (std::uint32_t slot = kSlots; slot < *slots && ok; ++slot) {
    switch (slot) {
      case kUniqueKey:
        text(r.unique_key);
        break;
      case kOrderingKey:
        text(r.ordering_key);
        break;
      case kReadyAtMs:
        r.ready_at_ms = number();
        break;
      case kBlockedBy:
        text(r.blocked_by);
        break;
      case kConstraints:
        if (auto list = read_strings(in)) {
          r.constraints = std::move(*list);
        } else {
          ok = false;
        }
        break;
      case kSchedule:
        if (auto pair = read_strings(in); pair && pair->size() == 2) {
          r.schedule = std::move((*pair)[0]);
          r.scheduled_at = std::move((*pair)[1]);
        } else {
          ok = pair.has_value();
        }
        break;
      case kAppended:
        r.appended = static_cast<int>(number());
        break;
      default:  // kUniqueUntil (the scripts' business), and slots of a later version
        ok = in.skip().has_value();
    }
  }
  return ok;
}

}  // namespace

std::optional<JobRecord> decode_record(std::string_view packed) {
  JobRecord r;
  if (!decode_into(packed, r)) return std::nullopt;
  return r;
}

std::unique_ptr<JobRecord> decode_boxed_record(std::string_view packed) {
  auto r = std::make_unique<JobRecord>();
  if (!decode_into(packed, *r)) return nullptr;
  return r;
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
