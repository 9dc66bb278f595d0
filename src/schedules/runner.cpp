#include "src/schedules/runner.hpp"

#include <algorithm>
#include <charconv>
#include <memory>

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
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
    : store_(store), loop_(io.get_executor(), "schedules", [this] { return step(); }) {
  for (int shard = 0; shard < store_.shards(); ++shard) to_load_.insert(shard);
}

void Runner::on_event(const events::Event& event) {
  if (event.kind != events::EventKind::schedules) return;
  auto key = parse_key(event.arg);
  asio::post(loop_.strand(), [this, key = std::move(key)] {
    if (key) {
      to_reload_.insert(*key);
    } else {
      for (int shard = 0; shard < store_.shards(); ++shard) to_load_.insert(shard);
    }
    loop_.poke();
  });
}

asio::awaitable<Periodic::Duration> Runner::step() {
  // Redis away: wait for it quietly (the subscriber's reconnect asks for a reload anyway), and
  // look again soon: a reconnect takes a moment, and a tick due meanwhile may be late by a second.
  if (!store_.redis_ready()) co_return milliseconds(kFirstRetryMs);
  const std::int64_t now = store_.now_ms();
  start_reads(now);
  // Every entry due now is found due now, before any is acted on: a tick is missed when a master
  // found it due too late, not when the ticks due with it (or Redis) take long. Those put since
  // with an earlier due time were found when put (set_due).
  for (auto it = due_.lower_bound({found_until_ + 1, Key{}}); it != due_.end() && it->first <= now;
       ++it) {
    Entry& entry = entries_.at(it->second);
    if (entry.found_ms == 0) entry.found_ms = now;
  }
  found_until_ = std::max(found_until_, now);
  // In due order, past those being acted on; the rest wait for one of them to end (a poke).
  Periodic::Duration wait = kIdle;
  std::vector<Key> batch;
  for (auto it = due_.begin(); it != due_.end(); ++it) {
    if (in_flight_.contains(it->second)) continue;
    if (it->first > now) {
      wait = milliseconds(std::min(it->first - now, kLookAgainMs));
      break;
    }
    if (in_flight_.size() + batch.size() == kActTogether) break;
    batch.push_back(it->second);
  }
  for (Key& key : batch) start_act(std::move(key));
  if (!failed_loads_.empty() || !failed_reloads_.empty()) {
    wait = std::min<Periodic::Duration>(
        wait, milliseconds(std::max<std::int64_t>(retry_reads_at_ - now, 0)));
  }
  co_return wait;
}

void Runner::start_reads(std::int64_t now) {
  if (now >= retry_reads_at_) {
    to_load_.insert(failed_loads_.begin(), failed_loads_.end());
    failed_loads_.clear();
    to_reload_.insert(failed_reloads_.begin(), failed_reloads_.end());
    failed_reloads_.clear();
  }
  // One read of a shard or schedule at a time, and no shard read beside a read of one of its
  // schedules (what the one begun earlier read would be put over what the later one did):
  // asked again meanwhile, it is read again after (each read that ends pokes the loop).
  const auto reading_one_of = [this](int shard) {
    return std::any_of(reloading_.begin(), reloading_.end(),
                       [shard](const Key& key) { return key.second == shard; });
  };
  for (auto it = to_load_.begin(); it != to_load_.end();) {
    if (loading_.contains(*it) || reading_one_of(*it)) {
      ++it;
      continue;
    }
    loading_.insert(*it);
    asio::co_spawn(loop_.strand(), load(*it), asio::detached);
    it = to_load_.erase(it);
  }
  for (auto it = to_reload_.begin(); it != to_reload_.end();) {
    // Nor while its shard is read whole: that read, begun earlier, would drop what this one
    // put. It runs after (the load pokes the loop).
    if (reloading_.contains(*it) || loading_.contains(it->second) ||
        to_load_.contains(it->second)) {
      ++it;
      continue;
    }
    reloading_.insert(*it);
    asio::co_spawn(loop_.strand(), read_again(*it), asio::detached);
    it = to_reload_.erase(it);
  }
}

asio::awaitable<void> Runner::load(int shard) {
  auto records = co_await store_.load_shard(shard);
  loading_.erase(shard);
  if (!records) {
    spdlog::warn("schedules: cannot load those of shard {} ({}); retrying", shard,
                 records.error().message);
    failed_loads_.insert(shard);
    retry_reads_at_ = store_.now_ms() + kRetryMs;
  } else {
    // Put over what was known (put keeps when an entry unchanged was found due); what is gone
    // from the shard goes.
    std::set<Key> present;
    for (StoredSchedule& s : *records) {
      Key key{s.schedule.name, s.shard};
      present.insert(key);
      put(std::move(key), std::move(s));
    }
    for (auto it = entries_.begin(); it != entries_.end();) {
      const Key key = (it++)->first;
      if (key.second == shard && !present.contains(key)) drop(key);
    }
    if (to_load_.empty() && loading_.empty() && failed_loads_.empty()) {
      spdlog::info("schedules: {} loaded", entries_.size());
    }
  }
  loop_.poke();
}

asio::awaitable<void> Runner::read_again(Key key) {
  const bool read = co_await reload(key);
  reloading_.erase(key);
  if (!read) {
    failed_reloads_.insert(std::move(key));
    retry_reads_at_ = store_.now_ms() + kRetryMs;
  }
  loop_.poke();
}

void Runner::start_act(Key key) {
  in_flight_.insert(key);
  Key acted = key;
  asio::co_spawn(
      loop_.strand(), act(std::move(key)), [this, acted = std::move(acted)](std::exception_ptr e) {
        in_flight_.erase(acted);
        loop_.poke();
        if (!e) return;
        std::string why = "unknown error";
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& ex) {
          why = ex.what();
        } catch (...) {
        }
        // As for a Redis failure: again soon, not at once and for ever.
        spdlog::error("schedule {}: acting on it failed ({}); retrying", acted.first, why);
        retry_soon(acted);
      });
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
  // Due by the time the steps have looked at: found now (steps look on from there).
  entry.found_ms = due_ms > 0 && due_ms <= found_until_ ? store_.now_ms() : 0;
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
  // Gone, or read again meanwhile as changed (an edit): that record says what comes next.
  if (it == entries_.end() || it->second.stored.record.version != read.version) co_return;
  it->second.stored.record.next_ms = plan.after_ms;
  it->second.retry_ms = 0;
  set_due(key, it->second, plan.after_ms);
}

}  // namespace jq::schedules
