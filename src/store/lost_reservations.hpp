// Reservations whose answer never came (a connection that broke while reserveJobs ran, a proxy
// that timed out): the jobs they took may be running in Redis, sent to no worker. Each
// reservation carries a token unique to it, which its jobs keep while they run (R_TAKEN_BY);
// the master remembers the tokens of those it lost and, once Redis answers again, finds their
// jobs (findReserved) so that the caller gives them back with their attempt not counted. Without
// this they waited out their timeout and were reaped as a timed-out attempt (with max_retry 0:
// dead, never run).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "src/redis/client.hpp"
#include "src/redis/keys.hpp"
#include "src/store/reserved_job.hpp"

namespace jq::store {

namespace asio = boost::asio;

// Lost reservations remembered at most; beyond, the oldest are left to the reaper.
inline constexpr std::size_t kMaxLostReservations = 1024;

class LostReservations {
 public:
  LostReservations();

  // A token no other reservation of any master has: a random prefix of this process, then a
  // count.
  std::string next_token();
  // The reservation with `token`, made at `now_ms` in `shard`, got no usable answer.
  void lost(int shard, std::string token, std::int64_t now_ms);
  bool any() const { return count_.load(std::memory_order_relaxed) > 0; }
  // The running jobs of every reservation lost so far; those whose search failed (Redis away
  // again) are kept for the next call.
  asio::awaitable<std::vector<ReservedJob>> find(redis::Client& redis, const redis::Keys& keys);

 private:
  struct Lost {
    int shard;
    std::string token;
    std::int64_t now_ms;
  };
  void keep(std::deque<Lost> lost);

  std::string prefix_;
  std::atomic<std::uint64_t> made_{0};
  std::mutex mutex_;
  std::deque<Lost> lost_;
  std::atomic<std::size_t> count_{0};
};

}  // namespace jq::store
