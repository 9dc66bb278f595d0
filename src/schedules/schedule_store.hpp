// Schedules in Redis: where each lives, every change of one, and its ticks.
//
// A schedule lives in one shard, the one its jobs must be made in: its job template's
// ordering_key or unique_key routes them (src/store/job_routing.hpp), else the shard of a hash
// of its name (its home). Claiming a tick and storing its job is then one single-slot script
// (fireSchedule), valid on Redis Cluster. A name must be unique across shards, so the name's
// home shard keeps a claim, "<shard> <token>", saying where the schedule lives and which record
// there is the schedule (its token; tokens of a name only grow). Every step below is one
// single-slot script; what a crash between two steps leaves behind, any later step on the name
// (settle()) or any master's runner (finish_leaving()) completes or clears:
//
// - create: claim the name first (a free name, or a claim whose record is missing: that
//   record's shard is first fenced against its token, so a writer that was slow cannot bring it
//   back), then write the record. Crash between: a claim without a record, free for the next
//   create. Two creates racing: one claim wins; the loser's record, if any, is refused.
// - change in place: a compare-and-set on the record's version.
// - move (a change that routes the jobs elsewhere): the old record stops ticking and keeps the
//   new definition and where it goes ("leaving"); the claim moves (naming the old record as the
//   one it comes from); the new record is written with what the old one counted; the old record
//   goes. No two records tick at once; between the first and third step none does. A crash in
//   between is finished by any master: the leaving record is due at `settle_at` in every
//   master's runner, and any request on the name finishes it first. A tick that falls in that
//   window is late, so it counts as missed (with run_once its job is made when the move ends).
// - delete: the record goes (a tombstone of its token stays), then the claim. Crash between:
//   the claim names a missing record, and the name is free.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "api/schedule.hpp"
#include "common/expected.hpp"
#include "src/redis/bindings/schedule_writes.hpp"
#include "src/redis/client.hpp"
#include "src/redis/keys.hpp"
#include "src/schedules/schedule_record.hpp"
#include "src/schedules/ticks.hpp"
#include "src/store/constraint_set.hpp"
#include "src/store/store_error.hpp"
#include "src/util/time.hpp"

namespace jq::schedules {

namespace asio = boost::asio;
using store::StoreError;

// One schedule record with its decoded definition.
struct StoredSchedule {
  api::Schedule schedule;
  int shard = 0;
  ScheduleRecord record;
  // false: its definition does not decode on this master (e.g. a time zone its tz database
  // lacks); `schedule` holds only the name, and only a removal works on it.
  bool readable = true;
};

enum class FireOutcome { made, overlap, duplicate, missed };

struct Fired {
  FireOutcome outcome = FireOutcome::made;
  std::string job_id;  // made: the new job; overlap: the unfinished one; duplicate: the holder
};

class ScheduleStore {
 public:
  static constexpr int kAttempts = 5;  // rounds of a change that keeps meeting other changes
  // How long a master that began a move has to finish it before any master does.
  static constexpr std::int64_t kSettleAfterMs = 5000;

  ScheduleStore(redis::Client& redis, redis::Keys keys, int shards, SystemClock clock,
                api::JobDefaults defaults);

  int shards() const { return shards_; }
  std::int64_t now_ms() const { return epoch_ms(clock_()); }
  bool redis_ready() const { return redis_.ready(); }
  // Where the jobs it makes are matched against constraints (as JobStore::use_constraints).
  void use_constraints(store::ConstraintCache* constraints) { constraints_ = constraints; }

  // The API's side (the contract's /v1/schedules). conflict: the name is taken (create), or the
  // name kept changing under the call.
  asio::awaitable<Expected<std::vector<StoredSchedule>, StoreError>> list();
  asio::awaitable<Expected<StoredSchedule, StoreError>> get(std::string name);  // not_found
  asio::awaitable<Expected<StoredSchedule, StoreError>> create(api::Schedule schedule);
  asio::awaitable<Expected<StoredSchedule, StoreError>> replace(api::Schedule schedule);
  // conflict also when another change in between makes the patch invalid.
  asio::awaitable<Expected<StoredSchedule, StoreError>> patch(std::string name,
                                                              api::SchedulePatch patch);
  asio::awaitable<Expected<void, StoreError>> remove(std::string name);
  // One job now: made, or duplicate (its holder's id) when its unique_key's claim is held.
  asio::awaitable<Expected<Fired, StoreError>> run_now(std::string name);
  // Creates it, or replaces the one of that name (the config file's schedules at start).
  asio::awaitable<Expected<void, StoreError>> apply(api::Schedule schedule);

  // The runner's side. Every active or leaving record of a shard, or of one name in a shard.
  // load_shard also notes the shard's tombstones that the tombstones zset does not know yet
  // (written by a jqmaster before it had one) for removeSchedule's sweep.
  asio::awaitable<Expected<std::vector<StoredSchedule>, StoreError>> load_shard(int shard);
  asio::awaitable<Expected<std::optional<StoredSchedule>, StoreError>> load(int shard,
                                                                            std::string name);
  // One tick as planned from `s` as loaded. nullopt: the record changed since (load it again).
  asio::awaitable<Expected<std::optional<Fired>, StoreError>> fire(StoredSchedule s, TickPlan plan);
  // Finishes the move of a leaving record (or drops it if the move was given up).
  asio::awaitable<Expected<void, StoreError>> finish_leaving(int shard, std::string name);

 private:
  struct Settled {
    std::string claim;  // as read; "" none: the name is free
    std::optional<StoredSchedule> live;
  };
  // The name's claim and live record, after finishing a move or clearing a claim whose record
  // is missing.
  asio::awaitable<Expected<Settled, StoreError>> settle(std::string name);
  asio::awaitable<Expected<std::optional<StoredSchedule>, StoreError>> settle_round(
      const std::string& name, std::string claim_text);
  asio::awaitable<Expected<StoredSchedule, StoreError>> change(
      std::string name, std::function<Expected<api::Schedule, StoreError>(api::Schedule)> to);
  // Writes `next` where `current` is: in place, or by a move when its jobs go to another shard.
  // false: `current` changed since it was read.
  asio::awaitable<Expected<bool, StoreError>> write_change(const StoredSchedule& current,
                                                           const api::Schedule& next);
  asio::awaitable<Expected<void, StoreError>> finish_move(int shard, std::string name,
                                                          ScheduleRecord leaving);
  asio::awaitable<Expected<bool, StoreError>> claim_move(int shard, const std::string& name,
                                                         std::int64_t token, MoveIntent to);
  asio::awaitable<Expected<std::optional<Fired>, StoreError>> fire_call(const StoredSchedule& s,
                                                                        const TickPlan& plan,
                                                                        bool now_mode);

  asio::awaitable<Expected<std::string, StoreError>> read_claim(const std::string& name);
  asio::awaitable<Expected<std::optional<ScheduleRecord>, StoreError>> read_record(
      int shard, const std::string& name);
  asio::awaitable<Expected<bool, StoreError>> cas_claim(const std::string& name,
                                                        std::string expected, std::string claim);
  asio::awaitable<Expected<std::int64_t, StoreError>> next_token(const std::string& name);
  // The refusal of a request whose schedule kept changing under it (kAttempts rounds).
  static StoreError kept_changing(const std::string& name);
  asio::awaitable<Expected<redis::Reply, StoreError>> eval(redis::ScriptCall call);

  int home(const std::string& name) const;
  int shard_of(const api::Schedule& schedule) const;
  asio::awaitable<void> note_tombstones(int shard, std::vector<std::string> names);
  // removeSchedule of the record of `token` for `name` in `shard` (lua/removeSchedule-2.lua).
  redis::ScriptCall remove_call(int shard, std::string name, std::int64_t token,
                                redis::bindings::RemoveSchedule::Mode mode) const;
  // The anchor and next tick a changed definition starts from.
  std::pair<std::int64_t, std::int64_t> times_after_change(const StoredSchedule& current,
                                                           const api::Schedule& next) const;

  redis::Client& redis_;
  redis::Keys keys_;
  int shards_;
  SystemClock clock_;
  api::JobDefaults defaults_;
  store::ConstraintCache* constraints_ = nullptr;
};

// The record decoded with its definition; nullopt (logged) when the definition does not decode.
std::optional<StoredSchedule> stored_schedule(const std::string& name, int shard,
                                              ScheduleRecord record);

// The first tick a schedule has after `after_ms` when its timetable counts from `anchor_ms`;
// 0 when paused or none comes.
std::int64_t first_tick(const api::Schedule& schedule, std::int64_t anchor_ms,
                        std::int64_t after_ms);

}  // namespace jq::schedules
