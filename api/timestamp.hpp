// A point in time as a pusher writes it (a job's `run_at`): the RFC 3339 profile of ISO 8601,
// date and time with an explicit offset, e.g. 2026-12-01T09:00:00Z, 2026-12-01T11:00:00+02:00,
// 2026-12-01T09:00:00.250Z. This is exactly what JSON Schema's `format: date-time` means, and
// what date -Iseconds, Python's datetime.isoformat() on an aware datetime and JavaScript's
// toISOString() write.
//
// Parsed by hand, strictly: a time without an offset would be read in some zone nobody named,
// so it is refused rather than guessed. Accepted: YYYY-MM-DD, 'T' (or 't'), hh:mm:ss, an
// optional fraction of 1 or more digits, then 'Z' (or 'z') or +hh:mm / -hh:mm (-00:00 is UTC).
// The date must exist (no 2026-02-30). A leap second (:60) is the instant after :59, as
// Unix time counts it. Not accepted: a space for 'T', the basic format (20261201T090000Z),
// offsets without the colon (+0200) or without minutes (+02), week or ordinal dates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/expected.hpp"

namespace jq::api {

// Far above any real RFC 3339 time (35 bytes with nanoseconds and an offset); it bounds the
// digits of the fraction.
inline constexpr std::size_t kMaxTimestampBytes = 64;

// Milliseconds since the Unix epoch (negative before 1970). A fraction finer than a millisecond
// rounds up to the next one, so a job never becomes ready before its time. The error says what
// is wrong in words for a message ("has no offset: end it with Z for UTC, or +hh:mm").
Expected<std::int64_t, std::string> parse_timestamp_ms(std::string_view text);

}  // namespace jq::api
