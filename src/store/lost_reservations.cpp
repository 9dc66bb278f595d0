#include "src/store/lost_reservations.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <spdlog/spdlog.h>

#include "src/redis/bindings/find_reserved.hpp"
#include "src/redis/errc.hpp"

namespace jq::store {
namespace {

using redis::bindings::FindReserved;

// Members of the inflight zset looked at per findReserved call: a page stays a short call.
constexpr std::int64_t kPage = 500;

}  // namespace

LostReservations::LostReservations() {
  std::random_device random;
  const std::uint32_t bits = random();
  for (int i = 0; i < 4; ++i) prefix_ += static_cast<char>((bits >> (8 * i)) & 0xff);
}

std::string LostReservations::next_token() {
  std::string token = prefix_;
  std::uint64_t n = made_.fetch_add(1, std::memory_order_relaxed);
  do {
    token += static_cast<char>(n & 0xff);
    n >>= 8;
  } while (n > 0);
  return token;
}

void LostReservations::lost(int shard, std::string token, std::int64_t now_ms) {
  std::lock_guard lock(mutex_);
  if (lost_.size() >= kMaxLostReservations) lost_.erase(lost_.begin());
  lost_.push_back(Lost{.shard = shard, .token = std::move(token), .now_ms = now_ms});
  count_.store(lost_.size(), std::memory_order_relaxed);
}

bool LostReservations::due(std::int64_t now_ms) const {
  std::lock_guard lock(mutex_);
  return std::any_of(lost_.begin(), lost_.end(),
                     [&](const Lost& l) { return l.next_ms <= now_ms; });
}

asio::awaitable<std::vector<ReservedJob>> LostReservations::find(redis::Client& redis,
                                                                 const redis::Keys& keys,
                                                                 std::int64_t now_ms, bool every) {
  std::map<int, std::vector<Lost>> by_shard;
  {
    std::lock_guard lock(mutex_);
    auto not_due = std::partition(lost_.begin(), lost_.end(),
                                  [&](const Lost& l) { return !every && l.next_ms > now_ms; });
    for (auto it = not_due; it != lost_.end(); ++it) by_shard[it->shard].push_back(std::move(*it));
    lost_.erase(not_due, lost_.end());
    count_.store(lost_.size(), std::memory_order_relaxed);
  }
  std::vector<ReservedJob> found;
  std::vector<Lost> again;
  for (auto& [shard, lost] : by_shard) {
    const bool scanned = co_await find_in(redis, keys, shard, lost, found);
    if (!scanned && every) {
      spdlog::warn(
          "the jobs of {} call(s) whose answer was lost could not be looked for in shard {}; the "
          "reaper ends their attempt after its deadline",
          lost.size(), shard);
    }
    for (Lost& l : lost) {
      scanned ? ++l.searched : ++l.failed;
      l.next_ms = now_ms + (scanned ? kLostSearchAgainMs : 100);
      if (l.searched < kLostSearches && l.failed < kLostSearchFailures) {
        again.push_back(std::move(l));
      } else if (!every && l.failed >= kLostSearchFailures) {
        spdlog::warn(
            "the jobs of a call whose answer was lost could not be looked for in shard {}; the "
            "reaper ends their attempt after its deadline",
            shard);
      }
    }
  }
  if (!again.empty()) {
    std::lock_guard lock(mutex_);
    lost_.insert(lost_.begin(), std::make_move_iterator(again.begin()),
                 std::make_move_iterator(again.end()));
    while (lost_.size() > kMaxLostReservations) lost_.erase(lost_.begin());
    count_.store(lost_.size(), std::memory_order_relaxed);
  }
  co_return found;
}

asio::awaitable<bool> LostReservations::find_in(redis::Client& redis, const redis::Keys& keys,
                                                int shard, const std::vector<Lost>& lost,
                                                std::vector<ReservedJob>& found) {
  FindReserved::Args args{.now_ms = lost.front().now_ms, .cursor = "0", .count = kPage};
  for (const Lost& l : lost) {
    args.now_ms = std::min(args.now_ms, l.now_ms);
    args.tokens.push_back(l.token);
  }
  // ZSCAN may answer a member twice: each job is given back once.
  std::set<std::string> seen;
  for (const ReservedJob& job : found) {
    if (job.id.shard == shard) seen.insert(job.id.field);
  }
  std::string cursor = "0";
  do {
    FindReserved::Args page_args = args;
    page_args.cursor = std::move(cursor);
    // Made apart: g++ 12 mishandles the temporaries of a co_await's full expression (the master
    // crashed freeing one).
    redis::ScriptCall call =
        FindReserved::call(FindReserved::keys(keys, shard), std::move(page_args));
    auto reply = co_await redis.eval(std::move(call));
    if (!reply) co_return false;
    auto page = FindReserved::decode(std::move(*reply));
    if (!page) {
      spdlog::error("store: {}", page.error().message());
      co_return false;
    }
    for (FindReserved::Found& job : page->jobs) {
      if (!seen.insert(job.field).second) continue;
      auto record = decode_boxed_record(job.record);
      if (!record) {
        spdlog::error("store: findReserved: unreadable record of {}-{}", shard, job.field);
        continue;
      }
      found.push_back(ReservedJob{JobId{shard, std::move(job.field)}, std::move(record), 0});
    }
    cursor = std::move(page->cursor);
  } while (cursor != "0");
  co_return true;
}

}  // namespace jq::store
