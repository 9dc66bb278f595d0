// Reservations whose answer never came (a connection that broke while reserveJobs ran, a proxy
// that timed out): the jobs they took may be running in Redis, sent to no worker. Each
// reservation carries a token unique to it, which its jobs keep while they run (R_TAKEN_BY);
// the master remembers the tokens of those it lost and, once Redis answers again, finds their
// jobs (findReserved) so that the caller gives them back with their attempt not counted. Without
// this they waited out their timeout and were reaped as a timed-out attempt (with max_retry 0:
// dead, never run). A push that takes jobs at once for a free worker slot (pushJobs' take) is
// such a reservation too, and is remembered here the same way.
#pragma once

#include <atomic>
#include <cstdint>
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
// Each is looked for this many times, the second this long after the first: a proxy that
// answered a timeout may pass the call on to Redis after the first search.
inline constexpr int kLostSearches = 2;
inline constexpr std::int64_t kLostSearchAgainMs = 1000;
// Searches that fail (Redis away again, an unreadable answer) before one is left to the reaper.
inline constexpr int kLostSearchFailures = 5;

class LostReservations {
 public:
  LostReservations();

  // A token no other reservation of any master has while its jobs run: four random bytes of
  // this process, then a count, in as few bytes as it takes (a running record carries it, and a
  // record over 64 bytes turns its bucket into a hashtable).
  std::string next_token();
  // The reservation with `token`, made at `now_ms` in `shard`, got no usable answer.
  void lost(int shard, std::string token, std::int64_t now_ms);
  // Any remembered (an atomic load: the scheduler asks at every step).
  bool any() const { return count_.load(std::memory_order_relaxed) > 0; }
  // Some are due for a search at `now_ms`.
  bool due(std::int64_t now_ms) const;
  // The running jobs of the reservations due (`every`: of all of them, as a master stopping
  // looks for them one last time), each once (one scan per shard for all of its).
  asio::awaitable<std::vector<ReservedJob>> find(redis::Client& redis, const redis::Keys& keys,
                                                 std::int64_t now_ms, bool every = false);

 private:
  struct Lost {
    int shard;
    std::string token;
    std::int64_t now_ms;
    int searched = 0;
    int failed = 0;
    std::int64_t next_ms = 0;  // not searched before
  };
  // One shard's reservations; false when the scan did not finish.
  asio::awaitable<bool> find_in(redis::Client& redis, const redis::Keys& keys, int shard,
                                const std::vector<Lost>& lost, std::vector<ReservedJob>& found);

  std::string prefix_;
  std::atomic<std::uint64_t> made_{0};
  mutable std::mutex mutex_;
  std::vector<Lost> lost_;
  std::atomic<std::size_t> count_{0};  // lost_.size(), for any()
};

}  // namespace jq::store
