// A job a reservation took: in flight with its deadline, its attempt counted.
#pragma once

#include <cstdint>
#include <memory>

#include "src/store/job_id.hpp"
#include "src/store/job_record.hpp"

namespace jq::store {

struct ReservedJob {
  JobId id;
  // Boxed: a reserved job passes through half a dozen hands (the reservation's vector, the jobs
  // ahead, the dispatcher's coroutines) and a record of a dozen strings moved by value cost the
  // master about 5 % of its instructions per job (callgrind, issue 14 row b). Null only moved from.
  std::unique_ptr<JobRecord> record = std::make_unique<JobRecord>();  // attempts counts this one
  std::int64_t deadline_ms = 0;

  // The token of the reservation (or the push) that took it: while a job runs its record's
  // result slot holds it (R_TAKEN_BY in lua/lib/preamble.lua).
  const std::string& token() const { return record->result; }
};

}  // namespace jq::store
