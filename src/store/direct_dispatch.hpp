// A push that may skip the queue. When this master holds a free worker slot for a job's name (or,
// no endpoint of it able to start a job, room to reserve a job ahead of a busy one) and knows
// every queue that worker serves to be empty, the job would be reserved for it the moment it is
// stored; pushJobs then takes it at once instead (stored running, its attempt counted), in the
// push's own call: one script call and no announcement instead of a push, an announcement and a
// reservation. The scheduler holds the slots, so it grants the claims and
// sends the jobs taken.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "src/store/reserved_job.hpp"

namespace jq::store {

struct SlotClaim {
  std::uint64_t id = 0;  // the claimant's own token
};

// A job of the push that may be taken: its name and priority.
struct ClaimWanted {
  std::string name;
  std::int32_t priority = 0;
};

class DirectDispatch {
 public:
  virtual ~DirectDispatch() = default;
  // Any thread, and cheap: false when no claim could be granted now (no free slot held, no room
  // ahead of a busy worker).
  virtual bool may_claim() const = 0;
  // A claim or none per job wanted, the best priorities served first.
  virtual boost::asio::awaitable<std::vector<std::optional<SlotClaim>>> claim(
      std::vector<ClaimWanted> wanted) = 0;
  // Any thread, exactly once per claim granted: the job pushJobs took for it, to send, or none
  // (not taken, or the push failed): the slot is free again.
  virtual void settle(SlotClaim claim, std::optional<ReservedJob> job) = 0;
};

}  // namespace jq::store
