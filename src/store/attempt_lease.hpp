// What names one attempt of a constrained job under {c}: the lease admitJobs takes for each pair
// the job matched and releaseLeases gives back, and the pairs as the scripts read them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "src/store/job_id.hpp"

namespace jq::store {

struct AttemptLease {
  // "<shard>-<field>:<attempt>": named by the attempt, so releasing an attempt that already
  // ended (a late answer, a reaped job) never frees the slot of the job's next attempt.
  std::string lease;
  std::string constraints;  // MessagePack [name1, key1, ...], as R_CONSTRAINTS
  // The attempt was never sent (a job reserved ahead and handed back): the rate steps it took
  // are given back too, since a rate counts dispatches actually sent.
  bool unsent = false;
};

// nullopt for a job that matched no constraint (`constraints` as JobRecord::constraints).
std::optional<AttemptLease> attempt_lease(const JobId& id, int attempt,
                                          const std::vector<std::string>& constraints);

}  // namespace jq::store
