// A plain job's record (lua/lib/preamble.lua's R_* slots) as pushJobs-10.lua stores it, packed by
// the master: the script stores it as given instead of packing the job's values itself, which was
// a quarter of its time per plain job, and joining a head packed here to slots packed there cost
// it another 0.3 µs per job (docs/BENCHMARKS.md). A job that is not plain gets its first six
// slots packed here (the head) and the rest in the script.
// Every value is packed as Lua's cmsgpack packs it (integers in their smallest form, strings as
// str): tests/redis/push_jobs_test.cpp checks the bytes against the script's own packing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace jq::redis {

// The values of a record's first six slots (R_NAME to R_TIMEOUT_MS).
struct RecordHead {
  std::string_view name;
  std::string_view argument;  // MessagePack bytes, kept as a string
  std::int32_t priority = 0;
  std::int64_t max_retry = 0;
  bool keep_result = false;  // packed as 0 or 1
  std::int64_t timeout_ms = 0;
};

// The first six slots, one value after the other: name and argument as strings, the others as
// integers.
std::string record_head(const RecordHead& head);

// How pushJobs stores a job: queued, or running its first attempt (taken at once).
enum class PushedAs { queued, running };

// Slots 7-13 of a job stored by one pushJobs call, the same for all of its jobs stored `as`:
// state queued with 0 attempts, or running with 1; enqueued_at `now_ms`, the ready stamp
// (`ready_stamp_us` in 9 base62 characters), last_error '', `traceparent` ('' none) and
// result: '' when queued, the call's `taken_by` token when running (R_TAKEN_BY).
std::string push_tail(PushedAs as, std::int64_t now_ms, std::int64_t ready_stamp_us,
                      std::string_view traceparent, std::string_view taken_by = {});

// A plain job's whole record: its head and one of the call's tails (13 slots), then when
// it matched constraints the five slots between (their "none" values) and the constraints'
// MessagePack array (19 slots).
std::string plain_record(const RecordHead& head, std::string_view tail,
                         std::string_view constraints);

}  // namespace jq::redis
