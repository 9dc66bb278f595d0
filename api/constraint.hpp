// Constraints (the contract's "Constraints"): flow control on the jobs a matcher selects. The
// wire model, its decoders for POST, PUT and PATCH bodies, and its encoding back to a response
// value (which is also how a definition is stored in Redis: the same map, as MessagePack).
//
// Every refusal is invalid_job naming the field by its path in the object: "match.name",
// "match.argument[1].path", "rate.period"; a body that is not a map, or not MessagePack/JSON at
// all, is bad_request.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/error.hpp"
#include "api/json_pointer.hpp"
#include "api/media_type.hpp"
#include "common/expected.hpp"

namespace jq::api {

inline constexpr std::size_t kMaxConstraintNameBytes = 128;
inline constexpr std::size_t kMaxGlobBytes = 128;
inline constexpr std::size_t kMaxConditions = 32;
inline constexpr std::size_t kMaxInValues = 256;
inline constexpr int kMaxConstraintConcurrency = 100000;
inline constexpr std::int64_t kMaxRateLimit = 1'000'000;
inline constexpr std::int64_t kMaxRateBurst = 1'000'000;
inline constexpr double kMaxRatePeriodSeconds = 31536000;  // a year

// 1-128 bytes of A-Z a-z 0-9 _ . : - (any of them first, unlike a job name). A new definition
// may not be named "ordering_key" besides (decode_constraint, decode_constraint_replace,
// decode_constraint_patch): a held job's blocked_by names its constraint, and "ordering_key"
// there says the job waits in its ordering line instead (the scripts tell the two apart by it).
bool is_valid_constraint_name(std::string_view name);
inline constexpr std::string_view kConstraintNameRule =
    "must be 1-128 bytes of A-Z a-z 0-9 _ . : -";

enum class ConditionKind { equals, in, exists };

// One condition on the argument: the value at `path` equals one value, is one of several, or
// exists (or not). Values are kept as their exact MessagePack bytes.
struct ArgumentCondition {
  JsonPointer path;
  ConditionKind kind = ConditionKind::exists;
  std::vector<std::string> values;  // equals: one; in: 1-256; exists: none
  bool exists = true;               // exists: true = must be there, false = must be absent

  bool operator==(const ArgumentCondition&) const = default;
};

struct ConstraintMatch {
  std::string name_glob;                    // "*" any run, "?" one byte; "*" alone: every name
  std::vector<ArgumentCondition> argument;  // all must hold

  bool operator==(const ConstraintMatch&) const = default;
};

// At most `limit` starts per `period`, smoothly (GCRA), plus `burst` after a quiet spell.
struct RateLimit {
  std::int64_t limit = 1;                  // 1-1000000
  std::chrono::milliseconds period{1000};  // > 0 s and <= a year, rounded up to the ms
  std::int64_t burst = 0;                  // 0-1000000

  bool operator==(const RateLimit&) const = default;
};

struct Constraint {
  std::string name;
  ConstraintMatch match;
  std::optional<JsonPointer> key;  // one limit per distinct value at this path
  std::optional<int> concurrency;  // 1-100000 running at once (per key)
  std::optional<RateLimit> rate;
  bool paused = false;

  bool operator==(const Constraint&) const = default;
};

// PATCH: each member that is set replaces the constraint's field. For the optional fields an
// inner nullopt removes it (the body said `null`). `match` and `rate` are replaced whole, not
// merged: a patch of `rate: {limit: 5, period: 1}` sets burst back to 0.
struct ConstraintPatch {
  std::optional<ConstraintMatch> match;
  std::optional<std::optional<JsonPointer>> key;
  std::optional<std::optional<int>> concurrency;
  std::optional<std::optional<RateLimit>> rate;
  std::optional<bool> paused;
};

// POST /v1/constraints: the whole object; `name` is required. `null` for key, concurrency or
// rate is the same as leaving it out (a GET's answer can be sent back as it is).
Expected<Constraint, ApiError> decode_constraint(std::string_view body, MediaType type);
// A definition as this master stored it (MessagePack): one stored before "ordering_key" was
// refused stays readable, so it can be seen and deleted.
Expected<Constraint, ApiError> decode_stored_constraint(std::string_view bytes);

// PUT /v1/constraints/{name}: the whole object; `name` may be left out, and when given must be
// `url_name` (else invalid_job, field "name").
Expected<Constraint, ApiError> decode_constraint_replace(std::string_view body, MediaType type,
                                                         std::string_view url_name);

// PATCH /v1/constraints/{name}: any of the fields; `name` as for PUT; `match` and `paused` may
// not be null.
Expected<ConstraintPatch, ApiError> decode_constraint_patch(std::string_view body, MediaType type,
                                                            std::string_view url_name);

Constraint apply_patch(Constraint constraint, const ConstraintPatch& patch);

// The object as the API answers it: {name, match: {name, argument: [...]}, key, concurrency,
// rate: {limit, period, burst}, paused}, absent optional fields as null. Condition values are
// raw_msgpack() values (api/body.hpp).
nlohmann::json constraint_view(const Constraint& constraint);

// The definition as stored in Redis: constraint_view() as MessagePack. Equal constraints encode
// to equal bytes (map keys are sorted).
std::string encode_constraint(const Constraint& constraint);

}  // namespace jq::api
