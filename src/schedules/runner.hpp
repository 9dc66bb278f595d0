// Makes the jobs of every schedule at their ticks. Each master runs one: it holds every schedule
// record in memory and sleeps until the earliest tick among them (or the moment a move left
// half done is to be finished), then claims the tick in Redis (fireSchedule). Every master
// tries, exactly one wins the compare-and-set; the others read the record again.
//
// Nothing polls. A change of any schedule on any master is announced as "t <shard> <name>" and
// this runner reads that record again; after the subscriber reconnects (events may have been
// missed) it reads them all again, and at start. A Redis failure retries that one schedule a
// second later; a tick found due more than a second after its time is missed (ticks.hpp). Ticks
// due together (thousands of schedules on the same minute) are claimed kActTogether at a time,
// each late by when a step found it due: the runner's own backlog misses none.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "src/events/event.hpp"
#include "src/schedules/schedule_store.hpp"
#include "src/util/periodic.hpp"

namespace jq::schedules {

class Runner {
 public:
  static constexpr std::int64_t kRetryMs = 1000;  // after Redis failed on a schedule
  // Due entries acted on at once: their fireSchedule calls go to Redis together.
  static constexpr std::size_t kActTogether = 64;
  // A step acts on due entries for this long at most, then reloads what changed meanwhile (and
  // may stop) before it goes on.
  static constexpr std::int64_t kStepMs = 500;

  Runner(asio::io_context& io, ScheduleStore& store);
  void start() { loop_.start(); }
  void stop() { loop_.stop(); }
  void on_event(const events::Event& event);  // any thread

 private:
  using Key = std::pair<std::string, int>;  // (name, shard): a moving schedule has two records
  struct Entry {
    StoredSchedule stored;
    Timetable timetable;
    std::int64_t due_ms = 0;  // when to act: its next tick, the end of a move, or a retry
    // When a step found it due (0: not yet since due_ms was set): its tick is late by how long
    // after its time that was, however long the ticks due with it take (plan_tick).
    std::int64_t found_ms = 0;
  };

  asio::awaitable<Periodic::Duration> step();
  asio::awaitable<bool> reload_all();
  asio::awaitable<bool> reload(Key key);
  // Acts on due entries together; returns when all are done.
  asio::awaitable<void> act_all(std::vector<Key> due);
  // Acts on one due entry: its tick, or finishing its move.
  asio::awaitable<void> act(Key key);
  asio::awaitable<void> tick(const Key& key, Entry entry);
  void put(Key key, std::optional<StoredSchedule> stored);
  void set_due(const Key& key, Entry& entry, std::int64_t due_ms);
  void drop(const Key& key);

  ScheduleStore& store_;
  // On the loop's strand.
  std::map<Key, Entry> entries_;
  std::set<std::pair<std::int64_t, Key>> due_;  // (due_ms, key) of entries with something to do
  bool reload_all_ = true;
  std::set<Key> to_reload_;
  Periodic loop_;
};

}  // namespace jq::schedules
