// A job a reservation took: in flight with its deadline, its attempt counted.
#pragma once

#include <cstdint>

#include "src/store/job_id.hpp"
#include "src/store/job_record.hpp"

namespace jq::store {

struct ReservedJob {
  JobId id;
  JobRecord record;  // attempts already counts this attempt
  std::int64_t deadline_ms = 0;
};

}  // namespace jq::store
