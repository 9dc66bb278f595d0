// Constraint definitions in Redis (hash tag {c}): one hash, name -> definition (the API's object
// as MessagePack, api::encode_constraint), and a version counter that every change moves on and
// announces as "c <version>", so every master reloads its ConstraintSet (constraint_set.hpp).
// Each change is one script: create refuses a taken name, replace and remove an unknown one, and
// a patch is merged here and written with a compare-and-set on the bytes it was merged from
// (updateConstraint-3), retried when another change came in between.
//
// live_state() reads what the dispatch side keeps per (constraint, key): the jobs held, counted
// in every shard, and under {c} the lease zsets scored by expiry and GCRA arrival times
// (docs/REDIS.md, "Constraints"); totals() sums them per constraint, with the starts ({c}) and
// holds (the shards) the dispatch scripts count, for /metrics. Both read every shard, one
// pipeline.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "api/constraint.hpp"
#include "common/expected.hpp"
#include "src/redis/client.hpp"
#include "src/redis/keys.hpp"
#include "src/store/constraint_set.hpp"
#include "src/store/handoff.hpp"
#include "src/store/store_error.hpp"
#include "src/util/time.hpp"

namespace jq::store {

// One key of a constraint, as GET /v1/constraints/{name} lists it.
struct ConstraintKeyState {
  std::string key;
  std::int64_t waiting = 0;
  std::int64_t running = 0;
  // When the rate lets this key start its next job, if that is later than now; nullopt when a
  // start is allowed now as far as the rate goes, or the constraint has no rate.
  std::optional<std::int64_t> next_start_at_ms;
};

// One constraint with its totals over all keys, as /metrics exposes them (totals()).
struct ConstraintTotals {
  api::Constraint constraint;
  std::int64_t waiting = 0;   // jobs it holds now
  std::int64_t running = 0;   // live leases now
  std::int64_t started = 0;   // starts it let through, since the store was created
  std::int64_t deferred = 0;  // times it held a job back, since then (a job held twice: 2)
};

struct ConstraintLiveState {
  std::int64_t waiting = 0;                  // jobs held by the constraint, over all keys
  std::int64_t running = 0;                  // live leases, over all keys
  std::int64_t keys = 0;                     // keys with waiting jobs or live leases
  std::vector<ConstraintKeyState> top_keys;  // at most kTopKeys, most waiting first
};

class ConstraintStore {
 public:
  static constexpr int kTopKeys = 20;
  static constexpr int kPatchAttempts = 5;

  ConstraintStore(redis::Client& redis, redis::Keys keys, int shards, SystemClock clock);

  // Every definition and the version, as one snapshot. A stored definition that no longer
  // decodes is logged and left out rather than stopping the master.
  asio::awaitable<Expected<ConstraintSet, StoreError>> load();
  // The constraints_version alone (0 before the first change).
  asio::awaitable<Expected<std::int64_t, StoreError>> version();

  asio::awaitable<Expected<std::vector<api::Constraint>, StoreError>> list();
  asio::awaitable<Expected<api::Constraint, StoreError>> get(std::string name);       // not_found
  asio::awaitable<Expected<api::Constraint, StoreError>> create(api::Constraint c);   // conflict
  asio::awaitable<Expected<api::Constraint, StoreError>> replace(api::Constraint c);  // not_found
  // not_found; conflict when kPatchAttempts compare-and-sets all lost to other changes.
  asio::awaitable<Expected<api::Constraint, StoreError>> patch(std::string name,
                                                               api::ConstraintPatch patch);
  asio::awaitable<Expected<void, StoreError>> remove(std::string name);  // not_found
  // Creates it, or replaces the one of that name (the config file's constraints at start).
  asio::awaitable<Expected<void, StoreError>> apply(api::Constraint c);

  // The hook for the dispatch side's bookkeeping: waiting and running jobs of `c` per key.
  asio::awaitable<Expected<ConstraintLiveState, StoreError>> live_state(api::Constraint c);
  // Every constraint with its totals, in one script call (constraintStats-4), by name. A stored
  // definition that no longer decodes is logged and left out, as in load().
  asio::awaitable<Expected<std::vector<ConstraintTotals>, StoreError>> totals();

 private:
  // After a change or removal of `name` (whose script made its held pairs due): its held jobs
  // that may start now try again (wakeConstraints) before the change is answered.
  asio::awaitable<void> wake_held(const std::string& name);
  // Per shard, the hash `key(shard)` (all in one pipeline): field -> the sum over the shards.
  asio::awaitable<Expected<std::map<std::string, std::int64_t>, StoreError>> sum_over_shards(
      std::function<std::string(int)> key);
  // The stored bytes of `name`; nullopt when there is none.
  asio::awaitable<Expected<std::optional<std::string>, StoreError>> read(std::string name);
  asio::awaitable<Expected<redis::Reply, StoreError>> eval(redis::ScriptCall call);
  std::int64_t now_ms() const;

  redis::Client& redis_;
  redis::Keys keys_;
  int shards_;
  SystemClock clock_;
  Handoff handoff_;
};

// When a key's rate allows its next start (ms), from its GCRA theoretical arrival time: the
// start is allowed once now >= tat - burst * period / limit. nullopt when that is not later than
// `now_ms`, or without a rate or a tat.
std::optional<std::int64_t> next_start_at_ms(const std::optional<api::RateLimit>& rate,
                                             std::optional<std::int64_t> tat_ms,
                                             std::int64_t now_ms);

}  // namespace jq::store
