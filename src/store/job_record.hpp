// A job's record as the scripts store it: a MessagePack array (lua/lib/preamble.lua, R_*).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/store/job_state.hpp"

namespace jq::store {

struct JobRecord {
  std::string name;
  std::string argument;  // MessagePack bytes
  std::int32_t priority = 0;
  int max_retry = 0;
  bool keep_result = false;
  std::int64_t timeout_ms = 0;
  JobState state = JobState::queued;
  int attempts = 0;
  std::int64_t enqueued_at_ms = 0;
  std::string ready_stamp;  // base62 (9 characters, µs): when it last became ready
  std::string last_error;   // empty: none
  std::string traceparent;  // empty: none
  // Finished jobs: the result object (MessagePack). Running jobs: the token of the reservation
  // (or the push) that took it (ReservedJob::token). Else empty.
  std::string result;
  std::string unique_key;        // empty: none
  std::string ordering_key;      // empty: none
  std::int64_t ready_at_ms = 0;  // scheduled jobs: when they are due (0: unknown, or at once)
  std::string blocked_by;  // queued jobs held back: "ordering_key" or a constraint; empty: not
  std::vector<std::string> constraints;  // matched at push: name1, key1, name2, key2, ...
  std::string schedule;                  // made by a schedule: its name; else empty
  std::string scheduled_at;  // made by a schedule: its tick, ISO 8601 with the zone's offset
  int appended = 0;  // on_duplicate append: `argument` is an array of this many pushed values
};

// nullopt when the bytes are not a record (a bug or a foreign key): callers answer 500.
std::optional<JobRecord> decode_record(std::string_view packed);
// The same on the heap, where a reserved job keeps it (store::ReservedJob): decoded there rather
// than moved there. Null when the bytes are not a record.
std::unique_ptr<JobRecord> decode_boxed_record(std::string_view packed);

// The value constraints match the job by: its argument, or the last value appended to it
// (contract: "Merging duplicates"). A view into `record`.
std::string_view match_argument(const JobRecord& record);

}  // namespace jq::store
