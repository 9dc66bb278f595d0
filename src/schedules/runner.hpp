// Makes the jobs of every schedule at their ticks. Each master runs one: it holds every schedule
// record in memory and sleeps until the earliest tick among them (or the moment a move left
// half done is to be finished), then claims the tick in Redis (fireSchedule). Every master
// tries, exactly one wins the compare-and-set; the others read the record again.
//
// Nothing polls Redis (the sleep towards a tick only wakes every kLookAgainMs to follow the
// wall clock). A change of any schedule on any master is announced as "t <shard> <name>" and
// this runner reads that record again; after the subscriber reconnects (events may have been
// missed) it reads them all again, and at start. A Redis failure retries that one schedule soon
// (100 ms, doubling up to a second); a tick found due more than a second after its time is
// missed (ticks.hpp). Ticks due together (thousands of schedules on the same minute) are claimed
// kActTogether at a time, each late by when a step found it due: the runner's own backlog misses
// none. Reads and ticks run on their own, so a shard whose Redis node fails holds up only its
// own schedules.
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
  // After Redis failed on a schedule: again at once (100 ms), then twice as long each time up
  // to a second, so that a blip (a reconnect, a moment over maxmemory) does not make a tick
  // later than the second it may be late.
  static constexpr std::int64_t kFirstRetryMs = 100;
  static constexpr std::int64_t kRetryMs = 1000;
  // Due entries acted on at once at most: the fireSchedule calls a step starts go to Redis
  // together, and an entry whose call waits (a cluster node failing over) holds one of these
  // while the others go on.
  static constexpr std::size_t kActTogether = 64;
  // The longest sleep towards a tick: the wait is reckoned on the wall clock but slept on the
  // steady one, which a clock step (NTP, a VM resumed) or a suspend leaves behind; looking
  // again this often finds the tick in time (a look compares times, nothing more).
  static constexpr std::int64_t kLookAgainMs = 500;

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
    std::int64_t retry_ms = 0;  // the wait before the last retry; 0 after an act that worked
  };

  asio::awaitable<Periodic::Duration> step();
  // Starts the reads asked for (to_load_, to_reload_), and those that failed once their retry
  // is due; each runs on its own and pokes the loop when done, so a shard that cannot be read
  // (its cluster node failing over) holds up neither the others nor the ticks.
  void start_reads(std::int64_t now);
  asio::awaitable<void> load(int shard);
  asio::awaitable<void> read_again(Key key);
  asio::awaitable<bool> reload(Key key);
  // Acts on one due entry, on its own (in_flight_ until it ends, then the loop is poked): its
  // tick, or finishing its move.
  void start_act(Key key);
  asio::awaitable<void> act(Key key);
  asio::awaitable<void> tick(const Key& key, Entry entry);
  void put(Key key, std::optional<StoredSchedule> stored);
  void set_due(const Key& key, Entry& entry, std::int64_t due_ms);
  void retry_soon(const Key& key);  // Redis failed on it
  void drop(const Key& key);

  ScheduleStore& store_;
  // On the loop's strand.
  std::map<Key, Entry> entries_;
  std::set<std::pair<std::int64_t, Key>> due_;  // (due_ms, key) of entries with something to do
  std::int64_t found_until_ = -1;  // every entry due by then was found due (found_ms set)
  std::set<Key> in_flight_;        // entries being acted on
  std::set<int> to_load_, loading_, failed_loads_;  // shards to read whole
  std::set<Key> to_reload_, reloading_, failed_reloads_;
  std::int64_t retry_reads_at_ = 0;  // when the failed reads are tried again
  Periodic loop_;
};

}  // namespace jq::schedules
