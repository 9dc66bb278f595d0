#include "src/schedules/runner.hpp"

#include <algorithm>
#include <charconv>
#include <memory>

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace jq::schedules {
namespace {

using std::chrono::milliseconds;

// Nothing due: the wait ends on an event; the timer only bounds it.
constexpr Periodic::Duration kIdle = std::chrono::hours(1);

// "<shard> <name>"; nullopt for anything else (then every schedule is read again).
std::optional<std::pair<std::string, int>> parse_key(std::string_view arg) {
  const auto space = arg.find(' ');
  if (space == std::string_view::npos || space + 1 >= arg.size()) return std::nullopt;
  int shard = 0;
  const auto [end, ec] = std::from_chars(arg.data(), arg.data() + space, shard);
  if (ec != std::errc{} || end != arg.data() + space) return std::nullopt;
  return std::pair<std::string, int>(std::string(arg.substr(space + 1)), shard);
}

}  // namespace

Runner::Runner(asio::io_context& io, ScheduleStore& store)
    : store_(store), loop_(io.get_executor(), "schedules", [this] { return step(); }) {}

void Runner::on_event(const events::Event& event) {
  if (event.kind != events::EventKind::schedules) return;
  auto key = parse_key(event.arg);
  asio::post(loop_.strand(), [this, key = std::move(key)] {
    if (key) {
      to_reload_.insert(*key);
    } else {
      reload_all_ = true;
    }
    loop_.poke();
  });
}

asio::awaitable<Periodic::Duration> Runner::step() {
  const milliseconds retry(kRetryMs);
  // Redis away: wait for it quietly (the subscriber's reconnect asks for a reload anyway), and
  // look again soon: a reconnect takes a moment, and a tick due meanwhile may be late by a second.
  if (!store_.redis_ready()) co_return milliseconds(kFirstRetryMs);
  if (reload_all_) {
    const bool loaded = co_await reload_all();
    if (!loaded) co_return retry;
  }
  while (!to_reload_.empty()) {
    Key key = *to_reload_.begin();
    to_reload_.erase(to_reload_.begin());
    const bool read = co_await reload(key);
    if (!read) {
      to_reload_.insert(std::move(key));
      co_return retry;
    }
  }
  // Every entry due now is found due now, before any is acted on: a tick is missed when a master
  // found it due too late, not when the ticks due with it (or Redis) take long.
  const std::int64_t started = store_.now_ms();
  // Found up to here: the entries due since are found before the next batch is cut (due_ is in
  // due order), those put meanwhile with an earlier due time when they are batched.
  std::int64_t found_until = -1;
  const auto find_due = [&](std::int64_t now) {
    for (auto it = due_.lower_bound({found_until + 1, Key{}}); it != due_.end() && it->first <= now;
         ++it) {
      Entry& entry = entries_.at(it->second);
      if (entry.found_ms == 0) entry.found_ms = now;
    }
    found_until = now;
  };
  find_due(started);
  for (;;) {
    if (due_.empty()) co_return kIdle;
    const std::int64_t now = store_.now_ms();
    const std::int64_t wait = due_.begin()->first - now;
    if (wait > 0) co_return milliseconds(std::min(wait, kLookAgainMs));
    if (now - started >= kStepMs) co_return milliseconds(0);  // reloads first, then on
    find_due(now);
    std::vector<Key> batch;
    for (auto it = due_.begin(); it != due_.end() && it->first <= now; ++it) {
      Entry& entry = entries_.at(it->second);
      if (entry.found_ms == 0) entry.found_ms = now;
      batch.push_back(it->second);
      if (batch.size() == kActTogether) break;
    }
    co_await act_all(std::move(batch));
  }
}

asio::awaitable<void> Runner::act_all(std::vector<Key> due) {
  // Each act on the loop's strand; the last to finish ends the wait (the timer's expiry set to
  // the past first, in case all finished before the wait began).
  auto left = std::make_shared<std::size_t>(due.size());
  auto all_done =
      std::make_shared<asio::steady_timer>(loop_.strand(), asio::steady_timer::time_point::max());
  for (Key& key : due) {
    Key failed = key;
    asio::co_spawn(loop_.strand(), act(std::move(key)),
                   [this, left, all_done, failed = std::move(failed)](std::exception_ptr e) {
                     // First, whatever follows: the wait ends (its handler runs after this one).
                     if (--*left == 0) {
                       all_done->expires_at(asio::steady_timer::time_point::min());
                       all_done->cancel();
                     }
                     if (!e) return;
                     std::string why = "unknown error";
                     try {
                       std::rethrow_exception(e);
                     } catch (const std::exception& ex) {
                       why = ex.what();
                     } catch (...) {
                     }
                     // As for a Redis failure: again a second later, not at once and for ever.
                     spdlog::error("schedule {}: acting on it failed ({}); retrying", failed.first,
                                   why);
                     retry_soon(failed);
                   });
  }
  boost::system::error_code ignored;
  if (*left > 0) co_await all_done->async_wait(asio::redirect_error(asio::use_awaitable, ignored));
}

asio::awaitable<bool> Runner::reload_all() {
  reload_all_ = false;
  std::vector<StoredSchedule> loaded;
  for (int shard = 0; shard < store_.shards(); ++shard) {
    auto records = co_await store_.load_shard(shard);
    if (!records) {
      spdlog::warn("schedules: cannot load them ({}); retrying", records.error().message);
      reload_all_ = true;
      co_return false;
    }
    for (StoredSchedule& s : *records) loaded.push_back(std::move(s));
  }
  // Put over what was known (put keeps when an entry unchanged was found due); what is gone goes.
  std::set<Key> present;
  for (StoredSchedule& s : loaded) {
    Key key{s.schedule.name, s.shard};
    present.insert(key);
    put(std::move(key), std::move(s));
  }
  for (auto it = entries_.begin(); it != entries_.end();) {
    const Key key = (it++)->first;
    if (!present.contains(key)) drop(key);
  }
  spdlog::info("schedules: {} loaded", entries_.size());
  co_return true;
}

asio::awaitable<bool> Runner::reload(Key key) {
  auto stored = co_await store_.load(key.second, key.first);
  if (!stored) {
    spdlog::warn("schedules: cannot read {} ({}); retrying", key.first, stored.error().message);
    co_return false;
  }
  put(std::move(key), std::move(*stored));
  co_return true;
}

void Runner::put(Key key, std::optional<StoredSchedule> stored) {
  // Read again with the same due time (a change that kept the next tick, a reload of them all),
  // it keeps when a step found it due.
  const auto before = entries_.find(key);
  const std::int64_t due_before = before == entries_.end() ? 0 : before->second.due_ms;
  const std::int64_t found_before = before == entries_.end() ? 0 : before->second.found_ms;
  drop(key);
  if (!stored) return;
  const std::int64_t anchor = stored->record.anchor_ms;
  Timetable timetable = timetable_of(stored->schedule, anchor);
  const std::int64_t due = stored->record.next_ms;  // leaving: when to finish the move
  const auto it = entries_.emplace(key, Entry{std::move(*stored), std::move(timetable), 0}).first;
  set_due(key, it->second, due);
  if (due == due_before) it->second.found_ms = found_before;
}

void Runner::set_due(const Key& key, Entry& entry, std::int64_t due_ms) {
  if (entry.due_ms > 0) due_.erase({entry.due_ms, key});
  entry.due_ms = due_ms;
  entry.found_ms = 0;
  if (due_ms > 0) due_.insert({due_ms, key});
}

void Runner::retry_soon(const Key& key) {
  const auto it = entries_.find(key);
  if (it == entries_.end()) return;
  Entry& entry = it->second;
  const std::int64_t wait =
      entry.retry_ms == 0 ? kFirstRetryMs : std::min(entry.retry_ms * 2, kRetryMs);
  set_due(key, entry, store_.now_ms() + wait);
  entry.retry_ms = wait;
}

void Runner::drop(const Key& key) {
  const auto it = entries_.find(key);
  if (it == entries_.end()) return;
  set_due(key, it->second, 0);
  entries_.erase(it);
}

asio::awaitable<void> Runner::act(Key key) {
  const auto it = entries_.find(key);
  if (it == entries_.end()) co_return;
  if (it->second.stored.record.status == RecordStatus::active) {
    co_await tick(key, it->second);
    co_return;
  }
  // A move that the master which began it has not finished in time.
  auto finished = co_await store_.finish_leaving(key.second, key.first);
  if (!finished) {
    spdlog::warn("schedule {}: cannot finish its move yet ({}); retrying", key.first,
                 finished.error().message);
  }
  const bool read = finished && co_await reload(key);
  if (!read) retry_soon(key);
}

// `entry` is a copy: the map may change while the tick is in Redis.
asio::awaitable<void> Runner::tick(const Key& key, Entry entry) {
  const std::int64_t now = store_.now_ms();
  const ScheduleRecord& read = entry.stored.record;
  const std::int64_t found = entry.found_ms > 0 ? std::min(entry.found_ms, now) : now;
  const TickPlan plan = plan_tick(entry.stored.schedule, entry.timetable, read.next_ms, now, found);
  auto fired = co_await store_.fire(entry.stored, plan);
  if (!fired) {
    spdlog::warn("schedule {}: its tick could not be made ({}); retrying", key.first,
                 fired.error().message);
    retry_soon(key);
    co_return;
  }
  if (!*fired) {  // another master made it, or the schedule changed: read it again
    const bool reread = co_await reload(key);
    if (!reread) {
      retry_soon(key);
      co_return;
    }
    const auto it = entries_.find(key);
    if (it != entries_.end() && it->second.stored.record.version == read.version &&
        it->second.stored.record.next_ms == read.next_ms && it->second.due_ms <= now) {
      spdlog::error("schedule {}: its tick was refused, yet the record did not change", key.first);
      retry_soon(key);
    }
    co_return;
  }
  if (plan.missed > 0) {
    spdlog::info("schedule {}: {} ticks missed (missed: {})", key.first, plan.missed,
                 api::to_string(entry.stored.schedule.missed));
  }
  const auto it = entries_.find(key);
  if (it == entries_.end()) co_return;
  it->second.stored.record.next_ms = plan.after_ms;
  it->second.retry_ms = 0;
  set_due(key, it->second, plan.after_ms);
}

}  // namespace jq::schedules
