#include "src/scheduler/promoter.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

namespace jq::scheduler {
namespace {

using std::chrono::milliseconds;

constexpr int kPromoteBatch = 1000;
constexpr int kWakePairs = 100;  // pairs per wakeConstraints call
constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();
// A net for events missed while the subscriber reconnects; the due times are what drive it.
constexpr milliseconds kMaxSleep{5000};
constexpr milliseconds kRedisAway{200};
// After a shard's promotion (or the constraints' wake) failed: look again this soon.
constexpr milliseconds kAfterFailure{200};

// The next time to look: the earliest of what Redis said is due (0: nothing) and what was
// announced meanwhile (kNone: nothing), or kMaxSleep from now when neither says anything.
std::int64_t earliest(std::int64_t due, std::int64_t announced, std::int64_t now_ms) {
  const std::int64_t next = std::min(due > 0 ? due : kNone, announced);
  return next == kNone ? now_ms + kMaxSleep.count() : next;
}

}  // namespace

Promoter::Promoter(asio::io_context& io, redis::Client& redis, store::DispatchStore& store)
    : redis_(redis),
      store_(store),
      loop_(io.get_executor(), "promoter", [this] { return step(); }) {}

void Promoter::on_event(const events::Event& event) {
  if (event.kind != events::EventKind::scheduled) return;
  std::int64_t due = 0;
  std::from_chars(event.arg.data(), event.arg.data() + event.arg.size(), due);
  asio::post(loop_.strand(), [this, due] {
    bool sooner = false;
    for (std::int64_t* next : {&next_due_ms_, &next_wake_ms_}) {
      // 0 is "look now" (no pass has run yet): a later time heard before Redis was ready must
      // not put off the first pass, and this master's overdue retries, until then.
      if (*next != 0 && due < *next) {
        *next = due;
        sooner = true;
      }
    }
    if (sooner) loop_.poke();
  });
}

asio::awaitable<Periodic::Duration> Promoter::step() {
  // Redis away: wait for it, whatever is due (a due time already past would ask for no sleep).
  if (!redis_.ready()) co_return kRedisAway;
  if (store_.now_ms() >= next_due_ms_) co_await promote_all();
  if (store_.now_ms() >= next_wake_ms_) co_await wake_constraints();
  const std::int64_t next =
      std::min(next_due_ms_ > 0 ? next_due_ms_ : kNone, next_wake_ms_ > 0 ? next_wake_ms_ : kNone);
  if (next == kNone) co_return kMaxSleep;
  co_return std::min<Periodic::Duration>(
      kMaxSleep, milliseconds(std::max<std::int64_t>(0, next - store_.now_ms())));
}

// Promotes what is due in every shard and learns the next due time (kAfterFailure from now at
// the latest when a shard failed, so the next step looks again soon; with nothing scheduled,
// kMaxSleep from now, a net for announcements missed while the subscriber reconnects). A shard
// that fails does not hold up the others, nor their due times.
asio::awaitable<void> Promoter::promote_all() {
  // Due times announced while the pass runs may concern shards it has already read.
  next_due_ms_ = kNone;
  std::int64_t next = 0;
  bool all_read = true;
  // Every shard in one round trip (on a cluster a node down holds up only its own shards), then
  // those that had a full batch due, one by one, until they have no more.
  std::vector<Expected<store::PromoteOutcome, store::StoreError>> first =
      co_await store_.promote_all(kPromoteBatch);
  for (int shard = 0; shard < static_cast<int>(first.size()); ++shard) {
    auto r = std::move(first[static_cast<std::size_t>(shard)]);
    for (;;) {
      if (!r) {
        spdlog::warn("promoting due retries of shard {} failed: {}", shard, r.error().message);
        all_read = false;
        break;
      }
      if (r->next_due_ms && (next == 0 || *r->next_due_ms < next)) next = *r->next_due_ms;
      if (r->promoted < kPromoteBatch || (r->next_due_ms && *r->next_due_ms > store_.now_ms())) {
        break;
      }
      r = co_await store_.promote(shard, kPromoteBatch);
    }
  }
  const std::int64_t announced = next_due_ms_;  // the earliest "s <due>" heard meanwhile
  const std::int64_t now = store_.now_ms();
  next_due_ms_ = earliest(next, announced, now);
  if (!all_read) next_due_ms_ = std::min(next_due_ms_, now + kAfterFailure.count());
}

// The pairs due in wake_due, woken (Handoff); the next due time, as for the retries.
asio::awaitable<void> Promoter::wake_constraints() {
  next_wake_ms_ = kNone;
  auto r = co_await store_.wake_due_constraints(kWakePairs);
  const std::int64_t announced = next_wake_ms_;
  if (!r) {
    spdlog::warn("waking jobs held by constraints failed: {}", r.error().message);
    next_wake_ms_ = earliest(0, announced, store_.now_ms());
    next_wake_ms_ = std::min(next_wake_ms_, store_.now_ms() + kAfterFailure.count());
  } else {
    next_wake_ms_ = earliest(r->value_or(0), announced, store_.now_ms());
  }
}

}  // namespace jq::scheduler
