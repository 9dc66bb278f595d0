// Gives back the constraint leases of attempts that ended, with as few releaseLeases calls as the
// load allows: leases that arrive while no call is on its way go at once; the ones that arrive
// meanwhile wait for it and go together in the next call (one slot of {c} takes them all). The
// slots a call frees are handed to held jobs (Handoff) without holding up the next call.
//
// Its pending leases belong to its strand: release() posts there, and one coroutine on the strand
// sends what is pending, call after call, until nothing is.
#pragma once

#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/strand.hpp>

#include "src/redis/client.hpp"
#include "src/redis/keys.hpp"
#include "src/store/attempt_lease.hpp"
#include "src/store/handoff.hpp"
#include "src/util/time.hpp"

namespace jq::store {

// What became of a releaseLeases call.
enum class LeaseRelease {
  released,
  refused,  // Redis refused it before it ran, or it was never sent: safe to send again
  unsure,   // its answer was lost or unreadable: it may have run, or may run yet
};

class LeaseReleaser {
 public:
  // When `handoff` says the steps are joined (one Redis), releaseLeases hands the freed slots on
  // itself, in the same step.
  LeaseReleaser(redis::Client& redis, const redis::Keys& keys, Handoff& handoff, SystemClock clock);

  // Sends them soon; a lease whose release is lost stops counting at its attempt's deadline.
  void release(std::vector<AttemptLease> leases);
  // Sends it now and waits for the answer (a job given back must not be ready while its old
  // lease still counts).
  asio::awaitable<LeaseRelease> release_now(AttemptLease lease);

 private:
  asio::awaitable<void> flush();  // on the strand, while anything is pending
  asio::awaitable<LeaseRelease> send(std::vector<AttemptLease> leases);

  redis::Client& redis_;
  const redis::Keys& keys_;
  Handoff& handoff_;
  SystemClock clock_;
  asio::strand<asio::any_io_executor> strand_;
  std::vector<AttemptLease> pending_;
  bool flushing_ = false;
};

}  // namespace jq::store
