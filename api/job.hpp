// A job as a pusher sends it, validated against the contract's job table.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/error.hpp"
#include "api/media_type.hpp"
#include "common/expected.hpp"

namespace jq::api {

inline constexpr std::size_t kMaxBatchJobs = 1000;
inline constexpr std::size_t kMaxNameBytes = 128;
inline constexpr int kMaxRetryLimit = 1000;
inline constexpr double kMaxTimeoutSeconds = 86400;
inline constexpr double kMaxDelaySeconds = 31536000;
inline constexpr double kMaxUniqueForSeconds = 31536000;
inline constexpr std::size_t kMaxKeyBytes = 256;  // unique_key, ordering_key

// Values a job takes when the pusher leaves a field out (config `defaults`).
struct JobDefaults {
  int max_retry = 3;
  std::chrono::milliseconds timeout{30'000};
  std::chrono::milliseconds unique_for{86'400'000};
};

// When a unique job gives up its claim (contract: "Unique jobs").
enum class UniqueUntil : std::uint8_t { finished = 0, started = 1 };

// When the job becomes ready: now (neither given), `delay` after the push, or at `run_at`.
struct ReadyAt {
  std::chrono::milliseconds delay{0};
  std::optional<std::int64_t> run_at_ms;  // ms since the epoch, from `run_at`
};

struct NewJob {
  std::string name;
  std::string argument;  // exactly one encoded MessagePack value (nil when absent), byte for byte
  std::int32_t priority = 0;
  int max_retry = 3;
  bool keep_result = false;
  std::chrono::milliseconds timeout{30'000};  // fractions of a second round up to the next ms
  ReadyAt ready_at;
  std::string unique_key;  // empty: not unique
  UniqueUntil unique_until = UniqueUntil::finished;
  std::chrono::milliseconds unique_for{86'400'000};
  std::string ordering_key;  // empty: not ordered
};

struct PushRequest {
  std::vector<NewJob> jobs;
  bool batch = false;  // the body was an array: answer {ids: [...]}, else {id}
};

// 1-128 bytes of A-Z a-z 0-9 _ . : -, not starting with '.', ':' or '-'.
bool is_valid_job_name(std::string_view name);
inline constexpr std::string_view kJobNameRule =
    "1-128 bytes of A-Z a-z 0-9 _ . : -, not starting with '.', ':' or '-'";

// Decodes and validates a POST /v1/jobs body. A batch is validated whole: the first bad job
// yields an error with `index`. Errors: bad_request (not MessagePack/JSON, not a map or array,
// empty or >1000 jobs), invalid_job (with `field`: unknown key, wrong type, out of range; and
// for fields that do not go together: `run_at` with `delay`, `unique_until` or `unique_for`
// without `unique_key`).
Expected<PushRequest, ApiError> decode_push(std::string_view body, MediaType type,
                                            const JobDefaults& defaults);

// One job's map (MessagePack), validated as decode_push validates each job of a batch: a
// schedule's job template (api/schedule.hpp).
Expected<NewJob, ApiError> decode_job_map(std::string_view map_value, const JobDefaults& defaults);

}  // namespace jq::api
