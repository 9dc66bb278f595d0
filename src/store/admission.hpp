// Whether the jobs a reservation took may start as far as their constraints go (contract:
// "Constraints"). reserveJobs takes a job that matched constraints like any other, as a
// candidate; admitJobs (under {c}, one call for the batch) takes all of each job's constraints or
// none; holdJobs (in the job's shard) gives a refused job back, held, with its attempt. Three
// steps of two hash tags, none touching both: a master that stops between them leaves the
// candidates in flight, and the reaper runs them again after their deadline (a timed-out
// attempt, as for any job in flight on a master that died).
#pragma once

#include <cstdint>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "src/redis/client.hpp"
#include "src/redis/keys.hpp"
#include "src/store/reserved_job.hpp"

namespace jq::store {

namespace asio = boost::asio;

class Admission {
 public:
  Admission(redis::Client& redis, const redis::Keys& keys);

  // `jobs`, as reserveJobs took them from `shard` at `now_ms`, without the candidates that may
  // not start. Candidates whose admission could not be asked are left out too (they stay in
  // flight until the reaper takes them).
  asio::awaitable<std::vector<ReservedJob>> admit(int shard, std::int64_t now_ms,
                                                  std::vector<ReservedJob> jobs);

 private:
  redis::Client& redis_;
  const redis::Keys& keys_;
};

}  // namespace jq::store
