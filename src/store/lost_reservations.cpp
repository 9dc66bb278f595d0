#include "src/store/lost_reservations.hpp"

#include <random>

#include <spdlog/spdlog.h>

#include "src/redis/bindings/find_reserved.hpp"

namespace jq::store {
namespace {

using redis::bindings::FindReserved;

// Members of the inflight zset looked at per findReserved call: a page stays a short call.
constexpr std::int64_t kPage = 500;

constexpr std::string_view kDigits =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

// Only unique, never read back: least significant digit first.
void append_base62(std::string& out, std::uint64_t n) {
  do {
    out += kDigits[n % 62];
    n /= 62;
  } while (n > 0);
}

}  // namespace

// Five random base62 characters (62^5, about 9 * 10^8) tell masters apart; the count then keeps
// the token short (a running record carries it).
LostReservations::LostReservations() {
  std::random_device random;
  std::uniform_int_distribution<std::size_t> digit(0, kDigits.size() - 1);
  for (int i = 0; i < 5; ++i) prefix_ += kDigits[digit(random)];
}

std::string LostReservations::next_token() {
  std::string token = prefix_;
  append_base62(token, made_.fetch_add(1, std::memory_order_relaxed));
  return token;
}

void LostReservations::lost(int shard, std::string token, std::int64_t now_ms) {
  std::lock_guard lock(mutex_);
  lost_.push_back(Lost{shard, std::move(token), now_ms});
  if (lost_.size() > kMaxLostReservations) lost_.pop_front();
  count_.store(lost_.size(), std::memory_order_relaxed);
}

void LostReservations::keep(std::deque<Lost> lost) {
  std::lock_guard lock(mutex_);
  // Older than the ones lost meanwhile: in front of them.
  for (auto it = lost.rbegin(); it != lost.rend(); ++it) lost_.push_front(std::move(*it));
  while (lost_.size() > kMaxLostReservations) lost_.pop_front();
  count_.store(lost_.size(), std::memory_order_relaxed);
}

asio::awaitable<std::vector<ReservedJob>> LostReservations::find(redis::Client& redis,
                                                                 const redis::Keys& keys) {
  std::deque<Lost> looking;
  {
    std::lock_guard lock(mutex_);
    looking.swap(lost_);
    count_.store(0, std::memory_order_relaxed);
  }
  std::vector<ReservedJob> found;
  std::deque<Lost> failed;
  for (Lost& reservation : looking) {
    std::string cursor = "0";
    bool done = false;
    for (;;) {
      // Made apart: g++ 12 mishandles the temporaries of a co_await's full expression (the master
      // crashed freeing one).
      redis::ScriptCall call =
          FindReserved::call(FindReserved::keys(keys, reservation.shard),
                             {reservation.token, reservation.now_ms, std::move(cursor), kPage});
      auto reply = co_await redis.eval(std::move(call));
      if (!reply) break;
      auto page = FindReserved::decode(std::move(*reply));
      if (!page) {
        spdlog::error("store: {}", page.error().message());
        break;
      }
      for (FindReserved::Found& job : page->jobs) {
        auto record = decode_boxed_record(job.record);
        if (!record) {
          spdlog::error("store: findReserved: unreadable record of {}-{}", reservation.shard,
                        job.field);
          continue;
        }
        found.push_back(
            ReservedJob{JobId{reservation.shard, std::move(job.field)}, std::move(record), 0});
      }
      cursor = std::move(page->cursor);
      if (cursor == "0") {
        done = true;
        break;
      }
    }
    if (!done) failed.push_back(std::move(reservation));
  }
  if (!failed.empty()) keep(std::move(failed));
  co_return found;
}

}  // namespace jq::store
