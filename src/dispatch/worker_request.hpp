// The body the master POSTs to a worker (the contract's Worker API), as MessagePack.
#pragma once

#include <cstdint>
#include <string>

#include "src/store/job_record.hpp"

namespace jq::dispatch {

// {id, name, argument, priority, attempt, max_retry, timeout, deadline}; the argument's bytes are
// spliced in unchanged, `attempt` is the record's attempts (already counted by the reservation).
std::string encode_worker_request(const std::string& id, const store::JobRecord& record,
                                  std::int64_t deadline_ms);

}  // namespace jq::dispatch
