// The job the master POSTs to a worker, as far as jqworker needs it: the id and attempt (for
// /stats and messages), the argument's raw MessagePack bytes (echoed back untouched), and the
// test directives read from the argument when it is a map (sleep_ms, fail, status, ...).
//
// The body is walked with api::MsgpackReader, whose skip() gives each value's bytes: that is how
// the argument's bytes are kept exactly as sent, with no re-encoding (and no allocation per key
// and value, as msgpack-cxx's unpack made: a tenth of jqworker's instructions per job).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/expected.hpp"

namespace jq::worker {

// What the job's `argument` asks jqworker to do; every field has the "just echo" default.
struct Directives {
  std::chrono::milliseconds sleep{0};         // sleep_ms: wait this long before answering
  bool close = false;                         // close: drop the connection without answering
  std::optional<int> status;                  // status: answer this HTTP status, text body
  std::optional<std::int64_t> retry_after_s;  // retry_after: Retry-After header with `status`
  std::size_t status_bytes = 0;  // status_bytes: the `status` answer's body padded to this size
  enum class Garbage { none, map, bytes };
  Garbage garbage = Garbage::none;  // garbage: true = a map that is no result; "bytes" = no msgpack
  bool timeout_reason = false;      // timeout_reason: a failure with reason "timeout"
  bool fail = false;                // fail: a failure with reason "other"
  std::optional<std::int64_t> fail_until;  // fail_until: fail attempts below this one
  bool should_retry = true;                // should_retry: copied into failures
};

struct JobRequest {
  std::string id;
  std::int64_t attempt = 0;
  std::string argument;  // raw MessagePack bytes of `argument`; nil (0xc0) when absent
  Directives directives;
};

// Accepts a MessagePack map with a string `id` and an integer `attempt`; other keys are not
// checked (the worker is loose on purpose). The error says what is wrong, for a 400 body.
Expected<JobRequest, std::string> parse_job(std::string_view body);

}  // namespace jq::worker
