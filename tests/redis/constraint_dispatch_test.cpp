// Constraints at dispatch, script by script, with the master's steps between them done here as
// src/store/admission.cpp and src/store/handoff.cpp do them: reserveJobs-9 takes candidates (or
// holds a job behind its pair's held jobs in the shard), admitJobs-2 decides under {c},
// holdJobs-6 gives refused jobs back held; releaseLeases-5 and wakeConstraints-5 give wake
// orders, unholdJobs-3 runs one in its shard and ackWake-2 reports back (contract:
// "Constraints").
#include <catch2/catch.hpp>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "tests/redis/constraint_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
using jq::redis::bindings::CancelJob;
using jq::store::JobState;
using nlohmann::json;

namespace {

// Constraint "one" (concurrency 1) and n jobs of its key k in one push to shard 0 (one ready
// stamp; their fields, in push order, break the tie).
std::vector<std::string> same_key(SyncRedis& r, const jq::redis::Keys& keys, int n) {
  define(r, keys, "one", {{"concurrency", 1}});
  return fields_of(push_jobs(r, keys, 0, std::vector<PushArgs>(n, constrained("one", "k"))));
}

// Constraint "one" (concurrency 1) and n jobs of its key k, each pushed on its own (ready stamps
// kStampUs + i) in shard 0; the first is started. Their fields, in push order.
std::vector<std::string> lined_up(SyncRedis& r, const jq::redis::Keys& keys, int n) {
  define(r, keys, "one", {{"concurrency", 1}});
  std::vector<std::string> f;
  for (int i = 0; i < n; ++i) {
    f.push_back(
        fields_of(push_jobs(r, keys, 0, {constrained("one", "k")}, kNowMs, kStampUs + i))[0]);
  }
  REQUIRE(take(r, keys, 1) == std::vector<std::string>{f[0]});
  return f;
}

// cancelJob of a job of shard 0 that has not started: cancelled.
void cancel(SyncRedis& r, const jq::redis::Keys& keys, const std::string& field) {
  auto status = CancelJob::decode(r.eval(CancelJob::call(
      CancelJob::keys(keys, 0, field), {field, kNowMs, keys.events_channel(0), 0})));
  REQUIRE(status);
  REQUIRE(*status == CancelJob::Status::cancelled);
}

// The pair (`ck`, "<name>#<key>") is due at `due` in wake_due, and the last event on the {c}
// channel announced it ("s <due>").
void due_and_announced(SyncRedis& r, const jq::redis::Keys& keys, EventListener& events,
                       const std::string& ck, std::int64_t due) {
  CHECK(zscore(r, wake_due_key(keys), ck) == due);
  const auto messages = events.take(r);
  REQUIRE_FALSE(messages.empty());
  CHECK(messages.back() == "s " + std::to_string(due));
}

}  // namespace

TEST_CASE(
    "concurrency: a key runs at most its limit, the rest wait held in their shard while other "
    "jobs run, and a finished attempt hands its slot to the oldest held one",
    "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  define(r, keys, "per-tenant", {{"concurrency", 2}});
  auto f = fields_of(push_jobs(r, keys, 0,
                               {constrained("per-tenant", "A"),
                                constrained("per-tenant", "A"),
                                constrained("per-tenant", "A"),
                                constrained("per-tenant", "B"),
                                {}}));
  events.take(r);

  CHECK(take(r, keys) == std::vector<std::string>{f[0], f[1], f[3], f[4]});
  auto held = read_record(r, keys, 0, f[2]);
  CHECK(held->state == JobState::queued);
  CHECK(held->attempts == 0);
  CHECK(held->blocked_by == "per-tenant");
  // Held in reserveJobs, which packs it from the bytes it loaded (19 slots, one more set).
  CHECK(held->argument == constrained("per-tenant", "A").argument);
  CHECK(held->name == constrained("per-tenant", "A").name);
  CHECK(zrange(r, held_key(keys, 0, "per-tenant", "A")) ==
        std::vector<std::pair<std::string, std::int64_t>>{{f[2], kStampUs}});
  CHECK(hgetall(r, keys.held_waiting(0, "per-tenant")) ==
        std::map<std::string, std::string>{{"A", "1"}});
  CHECK(hgetall(r, keys.held_tallies(0)) ==
        std::map<std::string, std::string>{{"waiting:per-tenant", "1"},
                                           {"deferred:per-tenant", "1"}});
  CHECK(zrange(r, c_key(keys, "held_shards", "per-tenant", "A")) ==
        std::vector<std::pair<std::string, std::int64_t>>{{"0", kStampUs}});
  CHECK(zscore(r, c_key(keys, "lease", "per-tenant", "A"), lease_of(0, f[0])) == kNowMs + 30000);
  // The slots free at the leases' deadlines at the latest: the pair is looked at then.
  CHECK(zscore(r, wake_due_key(keys), "per-tenant#A") == kNowMs + 30000);
  CHECK(hgetall(r, keys.counts(0)) ==
        std::map<std::string, std::string>{{"ready:email", "1"}, {"running:email", "4"}});
  CHECK(hgetall(r, keys.stats(0))["dispatched"] == "4");

  const auto orders = complete(r, keys, f[0], packed(json::array({"per-tenant", "A"})));
  CHECK(zmembers(r, c_key(keys, "lease", "per-tenant", "A")) ==
        std::vector<std::string>{lease_of(0, f[1])});
  if (joined_steps()) {
    CHECK(orders.empty());  // completeJobs ran the order itself (unhold, then ack)
  } else {
    CHECK(orders == std::vector<WakeOrder>{{"per-tenant", "A", 0, 1, -1}});
    const auto found = unhold(r, keys, orders[0]);
    CHECK(found.woken == 1);
    CHECK(found.oldest == -1);
    CHECK(found.settled == 1);  // the one refusal, held here
    CHECK(ack(r, keys, orders[0], found).empty());
  }
  CHECK_FALSE(exists(r, held_key(keys, 0, "per-tenant", "A")));
  CHECK_FALSE(exists(r, c_key(keys, "held_shards", "per-tenant", "A")));
  CHECK_FALSE(exists(r, c_key(keys, "refusals", "per-tenant", "A")));
  CHECK(hgetall(r, keys.held_waiting(0, "per-tenant")).empty());
  CHECK(hgetall(r, keys.held_tallies(0)) ==
        std::map<std::string, std::string>{{"deferred:per-tenant", "1"}});
  CHECK(read_record(r, keys, 0, f[2])->blocked_by.empty());
  const auto messages = events.take(r);
  REQUIRE(messages.size() == 1);
  CHECK(messages[0] == "p email 0 0 " + base62(kStampUs, 9) + f[2]);  // announced, old stamp
  CHECK(take(r, keys) == std::vector<std::string>{f[2]});
}

TEST_CASE(
    "a lease past its attempt's deadline no longer counts, and the pair is looked at then "
    "without any release",
    "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = same_key(r, keys, 2);
  CHECK(take(r, keys) == std::vector<std::string>{f[0]});
  // The first attempt's master died: nothing releases its lease.
  auto early = wake_due(r, keys, kNowMs + 29999);
  CHECK(early.orders.empty());
  CHECK(early.next_due_ms == kNowMs + 30000);
  auto due = wake_due(r, keys, kNowMs + 30001);
  CHECK(due.orders == std::vector<WakeOrder>{{"one", "k", 0, 1, -1}});
  CHECK(hand_off(r, keys, due.orders, kNowMs + 30001) == 1);
  CHECK(take(r, keys, 10, kNowMs + 30001) == std::vector<std::string>{f[1]});
}

TEST_CASE(
    "a job waits behind the jobs its key holds in other shards even when a slot is free, and "
    "wakes after them",
    "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = same_key(r, keys, 2);
  REQUIRE(take(r, keys) == std::vector<std::string>{f[0]});
  // The lease expired (its master died), and a younger job arrives in another shard before
  // anything woke f[1].
  auto late = fields_of(push_jobs(r, keys, 1, {constrained("one", "k")}, kNowMs, kStampUs + 5));
  CHECK(take(r, keys, 10, kNowMs + 30001, 1).empty());
  CHECK(zrange(r, c_key(keys, "held_shards", "one", "k")) ==
        std::vector<std::pair<std::string, std::int64_t>>{{"0", kStampUs}, {"1", kStampUs + 5}});
  CHECK(read_record(r, keys, 1, late[0])->blocked_by == "one");

  // The pair is due: f[1] (shard 0, older) goes first; the slot it takes holds the other back.
  auto due = wake_due(r, keys, kNowMs + 30001);
  CHECK(due.orders == std::vector<WakeOrder>{{"one", "k", 0, 1, kStampUs + 5}});
  CHECK(hand_off(r, keys, due.orders, kNowMs + 30001) == 1);
  CHECK(take(r, keys, 10, kNowMs + 30001) == std::vector<std::string>{f[1]});
  CHECK(zrange(r, c_key(keys, "held_shards", "one", "k")) ==
        std::vector<std::pair<std::string, std::int64_t>>{{"1", kStampUs + 5}});
}

TEST_CASE(
    "reserveJobs holds a job behind its key's older held jobs in the same shard at once, "
    "without asking for admission",
    "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = same_key(r, keys, 3);
  REQUIRE(take(r, keys, 1) == std::vector<std::string>{f[0]});
  REQUIRE(take(r, keys, 1).empty());               // f[1]: a candidate, refused, held
  CHECK(reserve(r, keys, 0, 10, kNowMs).empty());  // f[2]: held by reserveJobs alone
  CHECK(zmembers(r, held_key(keys, 0, "one", "k")) == std::vector<std::string>{f[1], f[2]});
  CHECK(read_record(r, keys, 0, f[2])->blocked_by == "one");
  CHECK(read_record(r, keys, 0, f[2])->attempts == 0);
  CHECK(hgetall(r, keys.held_tallies(0)) ==
        std::map<std::string, std::string>{{"waiting:one", "2"}, {"deferred:one", "2"}});
  if (joined_steps()) {
    // Refused and held in one step: no hold on its way to count.
    CHECK_FALSE(exists(r, c_key(keys, "refusals", "one", "k")));
  } else {
    CHECK(hget(r, c_key(keys, "refusals", "one", "k"), "0") == "1");  // only f[1] was refused
  }
}

TEST_CASE("rate: starts beyond limit + burst wait for their due time, which is announced",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  define(r, keys, "slow", {{"rate", {{"limit", 1}, {"period", 10}, {"burst", 1}}}});
  auto f = fields_of(push_jobs(
      r, keys, 0, {constrained("slow", "k"), constrained("slow", "k"), constrained("slow", "k")}));
  events.take(r);
  // 1 + burst start at once; the third is due one emission interval (10 s) after the first.
  CHECK(take(r, keys) == std::vector<std::string>{f[0], f[1]});
  const std::int64_t due = kNowMs + 10000;
  due_and_announced(r, keys, events, "slow#k", due);

  auto early = wake_due(r, keys, due - 1);
  CHECK(early.orders.empty());  // not yet
  CHECK(early.next_due_ms == due);
  auto now = wake_due(r, keys, due);
  CHECK(now.orders == std::vector<WakeOrder>{{"slow", "k", 0, 2, -1}});  // 1 + burst
  CHECK(hand_off(r, keys, now.orders, due) == 1);
  CHECK(take(r, keys, 10, due) == std::vector<std::string>{f[2]});
}

// The contract: a new rate applies to the next start. The steps taken at the old rate put the
// pair's next start a day away; raised, it must not wait for that day.
TEST_CASE("rate: a raised rate counts what the old steps owe in its own interval", "[redis]") {
  using jq::redis::bindings::UpdateConstraint;
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "daily", {{"rate", {{"limit", 1}, {"period", 86400}, {"burst", 0}}}});
  auto f = fields_of(
      push_jobs(r, keys, 0,
                {constrained("daily", "k"), constrained("daily", "k"), constrained("daily", "k")}));
  REQUIRE(take(r, keys) == std::vector<std::string>{f[0]});
  REQUIRE(zscore(r, wake_due_key(keys), "daily#k") == kNowMs + 86'400'000);
  json raised = {{"name", "daily"},
                 {"paused", false},
                 {"rate", {{"limit", 100}, {"period", 1}, {"burst", 0}}}};
  auto written = UpdateConstraint::decode(r.eval(
      UpdateConstraint::call(UpdateConstraint::keys(keys),
                             {"daily", packed(raised), "", keys.constraint_channel(), kNowMs})));
  REQUIRE(written);
  REQUIRE(written->status == UpdateConstraint::Status::replaced);
  // Looked at when the change makes it due, the old step owes one step of the new rate: f[1]
  // starts 10 ms on, f[2] 10 ms after it.
  const auto first = wake_due(r, keys, kNowMs);
  CHECK(first.orders.empty());
  CHECK(first.next_due_ms == kNowMs + 10);
  for (int i = 1; i <= 2; ++i) {
    const std::int64_t at = kNowMs + 10 * i;
    auto due = wake_due(r, keys, at);
    CHECK(hand_off(r, keys, due.orders, at) == 1);
    CHECK(take(r, keys, 10, at) == std::vector<std::string>{f[static_cast<std::size_t>(i)]});
  }
}

// Masters' clocks differ: one running 5 minutes slow must not shorten the interval the others
// keep (the rate unchanged, the tat is read as it is).
TEST_CASE("rate: a master whose clock is behind neither admits early nor moves the next start",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "hourly", {{"rate", {{"limit", 1}, {"period", 3600}, {"burst", 0}}}});
  const auto f0 = fields_of(push_jobs(r, keys, 0, {constrained("hourly", "k")}));
  REQUIRE(take(r, keys) == f0);
  // A minute on, a master whose clock is 5 minutes behind takes the next job of the key: refused
  // (its admission reads the pair's rate state at its own now).
  const std::int64_t slow = kNowMs + 60'000 - 300'000;
  const auto f1 =
      fields_of(push_jobs(r, keys, 0, {constrained("hourly", "k")}, slow, kStampUs + 1));
  CHECK(take(r, keys, 10, slow).empty());
  // 56 minutes on: still before the hour.
  const std::int64_t later = kNowMs + 56 * 60'000;
  CHECK(hand_off(r, keys, wake_due(r, keys, later).orders, later) == 0);
  CHECK(take(r, keys, 10, later).empty());
  const std::int64_t hour = kNowMs + 3'600'000;
  CHECK(hand_off(r, keys, wake_due(r, keys, hour).orders, hour) == 1);
  CHECK(take(r, keys, 10, hour) == f1);
}

TEST_CASE(
    "concurrency and rate: a slot freed while the rate holds the next start makes the pair due "
    "when the rate lets it, not at the freed slot's deadline",
    "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "both",
         {{"concurrency", 1}, {"rate", {{"limit", 1}, {"period", 10}, {"burst", 0}}}});
  auto f = fields_of(push_jobs(r, keys, 0, {constrained("both", "k"), constrained("both", "k")}));
  CHECK(take(r, keys) == std::vector<std::string>{f[0]});
  // f[1] was refused for the full slot: due at that slot's deadline, the job's timeout away.
  CHECK(zscore(r, wake_due_key(keys), "both#k") == kNowMs + 30000);
  EventListener events(shared_redis().port(), keys);
  // f[0] ends at once; the rate lets the next start 10 s after f[0]'s.
  CHECK(complete(r, keys, f[0], packed(json::array({"both", "k"}))).empty());
  const std::int64_t due = kNowMs + 10000;
  due_and_announced(r, keys, events, "both#k", due);
  auto woken = wake_due(r, keys, due);
  CHECK(hand_off(r, keys, woken.orders, due) == 1);
  CHECK(take(r, keys, 10, due) == std::vector<std::string>{f[1]});
}

TEST_CASE(
    "a rate step taken by an attempt never sent is given back with its lease; one the worker "
    "refused stays taken",
    "[redis]") {
  using jq::redis::bindings::ReleaseJob;
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "slow", {{"rate", {{"limit", 1}, {"period", 10}, {"burst", 0}}}});
  auto f = fields_of(push_jobs(r, keys, 0, {constrained("slow", "k"), constrained("slow", "k")}));
  REQUIRE(take(r, keys) == std::vector<std::string>{f[0]});  // f[1] waits for the rate
  // f[0] goes back, as the master gives back a job reserved ahead (unsent) or one its worker
  // refused with 429 (sent): its lease first, then the job.
  const bool unsent = GENERATE(true, false);
  INFO((unsent ? "unsent" : "refused by the worker"));
  release(r, keys, {{lease_of(0, f[0]), packed(json::array({"slow", "k"})), unsent}}, kNowMs,
          joined_steps());
  auto released = ReleaseJob::decode(r.eval(ReleaseJob::call(
      ReleaseJob::keys(keys, 0, "email"), {f[0], 1, keys.events_channel(0), 0, "t"})));
  REQUIRE(released);
  REQUIRE(*released == ReleaseJob::Status::released);
  // Unsent, the step is back and f[0] starts again now; refused, it waits its turn.
  const auto again = take(r, keys, 10, kNowMs + 1);
  if (unsent) {
    CHECK(again == std::vector<std::string>{f[0]});
  } else {
    CHECK(again.empty());
  }
}

TEST_CASE(
    "a paused constraint holds everything it matches; resuming it makes its held keys due, "
    "in the same step",
    "[redis]") {
  using jq::redis::bindings::UpdateConstraint;
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "frozen", {{"paused", true}});
  auto f = fields_of(push_jobs(r, keys, 0, {constrained("frozen", "null"), {}}));
  CHECK(take(r, keys) == std::vector<std::string>{f[1]});
  CHECK(wake_due(r, keys).orders.empty());  // nothing due: paused wakes nothing by itself

  json resumed = {{"name", "frozen"}, {"paused", false}};
  auto written = UpdateConstraint::decode(r.eval(
      UpdateConstraint::call(UpdateConstraint::keys(keys),
                             {"frozen", packed(resumed), "", keys.constraint_channel(), kNowMs})));
  REQUIRE(written);
  CHECK(written->status == UpdateConstraint::Status::replaced);
  CHECK(zscore(r, wake_due_key(keys), "frozen#null") == kNowMs);
  auto due = wake_due(r, keys);
  CHECK(hand_off(r, keys, due.orders) == 1);
  CHECK(take(r, keys) == std::vector<std::string>{f[0]});
}

TEST_CASE("a removed constraint holds nothing: all its held jobs wake, in every shard", "[redis]") {
  using jq::redis::bindings::RemoveConstraint;
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = same_key(r, keys, 3);
  auto g = fields_of(push_jobs(r, keys, 1, {constrained("one", "k")}, kNowMs, kStampUs + 9));
  REQUIRE(take(r, keys) == std::vector<std::string>{f[0]});
  REQUIRE(take(r, keys, 10, kNowMs, 1).empty());
  auto removed = RemoveConstraint::decode(r.eval(RemoveConstraint::call(
      RemoveConstraint::keys(keys), {"one", keys.constraint_channel(), kNowMs})));
  REQUIRE(removed);
  CHECK(removed->status == RemoveConstraint::Status::removed);
  auto due = wake_due(r, keys);
  CHECK(due.orders.size() == 2);  // every shard that holds some, at once
  CHECK(hand_off(r, keys, due.orders) == 3);
  CHECK(take(r, keys) == std::vector<std::string>{f[1], f[2]});
  CHECK(take(r, keys, 10, kNowMs, 1) == std::vector<std::string>{g[0]});
  CHECK_FALSE(exists(r, c_key(keys, "held_shards", "one", "k")));
  CHECK(r.call({"SMEMBERS", keys.constraint_state_prefix() + "held_keys:one"}).elements.empty());
}

TEST_CASE(
    "a cancelled held job leaves its shard's held zset and counts, and its pair's entry goes "
    "at the next wake",
    "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = same_key(r, keys, 2);
  REQUIRE(take(r, keys) == std::vector<std::string>{f[0]});
  REQUIRE(take(r, keys).empty());
  cancel(r, keys, f[1]);
  CHECK_FALSE(exists(r, held_key(keys, 0, "one", "k")));
  CHECK(hgetall(r, keys.held_waiting(0, "one")).empty());
  CHECK(hgetall(r, keys.held_tallies(0)) ==
        std::map<std::string, std::string>{{"deferred:one", "1"}});
  // {c} still lists the shard until a wake finds it empty.
  CHECK(exists(r, c_key(keys, "held_shards", "one", "k")));
  CHECK(hand_off(r, keys, complete(r, keys, f[0], packed(json::array({"one", "k"})))) == 0);
  CHECK_FALSE(exists(r, c_key(keys, "held_shards", "one", "k")));
}

TEST_CASE(
    "a woken job that does not start (cancelled, its queue paused) does not keep the pair's "
    "other held jobs waiting: the pair is looked at again",
    "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = same_key(r, keys, 3);
  REQUIRE(take(r, keys) == std::vector<std::string>{f[0]});
  REQUIRE(take(r, keys).empty());  // f[1] and f[2] held
  // f[0] ends: its slot goes to f[1], the oldest held.
  hand_off(r, keys, complete(r, keys, f[0], packed(json::array({"one", "k"}))));
  cancel(r, keys, f[1]);
  // The slot f[1] was handed is free: the pair is due again, and f[2] starts.
  const auto due = zscore(r, wake_due_key(keys), "one#k");
  REQUIRE(due);
  CHECK(*due <= kNowMs + 10000);
  const auto woken = wake_due(r, keys, *due, joined_steps());
  hand_off(r, keys, woken.orders, *due);
  CHECK(take(r, keys, 10, *due) == std::vector<std::string>{f[2]});
}

TEST_CASE("a job matching two constraints starts only when both allow it, and takes both",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "global", {{"concurrency", 5}});
  define(r, keys, "tenant", {{"concurrency", 1}});
  PushArgs both;
  both.constraints = packed(json::array({"global", "", "tenant", "A"}));
  auto f = fields_of(push_jobs(r, keys, 0, {both, both}));
  CHECK(take(r, keys) == std::vector<std::string>{f[0]});
  CHECK(zmembers(r, c_key(keys, "lease", "global", "")) ==
        std::vector<std::string>{lease_of(0, f[0])});
  CHECK(zmembers(r, c_key(keys, "lease", "tenant", "A")) ==
        std::vector<std::string>{lease_of(0, f[0])});
  CHECK(read_record(r, keys, 0, f[1])->blocked_by == "tenant");
  CHECK(hget(r, keys.constraint_counters(), "started:global") == "1");
  CHECK(hget(r, keys.constraint_counters(), "started:tenant") == "1");
}

TEST_CASE("held jobs never block the jobs behind them", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "one", {{"concurrency", 1}});
  std::vector<PushArgs> jobs(200, constrained("one", "k"));
  jobs.push_back({});
  auto f = fields_of(push_jobs(r, keys, 0, jobs));
  CHECK(take(r, keys, 1) == std::vector<std::string>{f[0]});
  // f[1] refused, held. Separate steps: it was the reservation's one job. Joined: a refusal takes
  // no place in the reservation, so the same call goes on.
  if (!joined_steps()) CHECK(take(r, keys, 1).empty());
  // One call: the other 198 held on the way, then the free job.
  CHECK(take(r, keys, 1) == std::vector<std::string>{f[200]});
  CHECK(hgetall(r, keys.held_waiting(0, "one")) ==
        std::map<std::string, std::string>{{"k", "199"}});
}

TEST_CASE(
    "a wake order's unused starts go on to the next shard: held jobs wake oldest first across "
    "shards",
    "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "two", {{"concurrency", 2}});
  // Two running, then held: shard 0 holds stamps +1 and +3, shard 1 holds +2.
  auto run = fields_of(push_jobs(r, keys, 0, {constrained("two", "k"), constrained("two", "k")}));
  REQUIRE(take(r, keys) == run);
  auto a = fields_of(push_jobs(r, keys, 0, {constrained("two", "k")}, kNowMs, kStampUs + 1));
  auto b = fields_of(push_jobs(r, keys, 1, {constrained("two", "k")}, kNowMs, kStampUs + 2));
  auto c = fields_of(push_jobs(r, keys, 0, {constrained("two", "k")}, kNowMs, kStampUs + 3));
  REQUIRE(take(r, keys).empty());
  REQUIRE(take(r, keys, 10, kNowMs, 1).empty());

  const std::string pairs = packed(json::array({"two", "k"}));
  auto orders = release(r, keys, {{lease_of(0, run[0]), pairs}, {lease_of(0, run[1]), pairs}});
  // Two slots: shard 0 wakes what it holds up to shard 1's oldest...
  REQUIRE(orders == std::vector<WakeOrder>{{"two", "k", 0, 2, kStampUs + 2}});
  auto found = unhold(r, keys, orders[0]);
  CHECK(found.woken == 1);
  CHECK(found.oldest == kStampUs + 3);
  // ...and hands the other start to shard 1, bounded by what shard 0 still holds.
  auto next = ack(r, keys, orders[0], found);
  REQUIRE(next == std::vector<WakeOrder>{{"two", "k", 1, 1, kStampUs + 3}});
  CHECK(unhold(r, keys, next[0]).woken == 1);
  CHECK(take(r, keys) == a);
  CHECK(take(r, keys, 10, kNowMs, 1) == b);
  CHECK(read_record(r, keys, 0, c[0])->blocked_by == "two");
}

TEST_CASE("releasing an attempt that already ended frees nothing and wakes nobody", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = same_key(r, keys, 2);
  REQUIRE(take(r, keys) == std::vector<std::string>{f[0]});
  REQUIRE(take(r, keys).empty());
  const std::string before = dump(r, c_key(keys, "lease", "one", "k"));
  // A late answer for an earlier attempt of the same job: its lease is long gone.
  CHECK(release(r, keys, {{lease_of(0, f[0], 7), packed(json::array({"one", "k"}))}}).empty());
  CHECK(dump(r, c_key(keys, "lease", "one", "k")) == before);
}

TEST_CASE(
    "ackWake keeps a shard whose refused job is still on its way to be held there, and lets it "
    "go once the shard has settled every refusal",
    "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = same_key(r, keys, 2);
  REQUIRE(take(r, keys, 1) == std::vector<std::string>{f[0]});
  // f[1] is refused by admitJobs, but its holdJobs has not landed when a wake runs in shard 0.
  const auto taken = reserve(r, keys, 0, 10, kNowMs);
  REQUIRE(admit(r, keys, 0, taken, kNowMs) == std::vector<std::int64_t>{1});
  const WakeOrder order{"one", "k", 0, 1, -1};
  auto found = unhold(r, keys, order);
  CHECK(found.woken == 0);
  CHECK(found.settled == 0);
  CHECK(ack(r, keys, order, found).empty());
  CHECK(zrange(r, c_key(keys, "held_shards", "one", "k")) ==
        std::vector<std::pair<std::string, std::int64_t>>{{"0", kStampUs}});

  // The hold lands: the shard is still listed, so the job is found at the next wake.
  hold(r, keys, 0, {{f[1], 1, "one", "k"}});
  found = unhold(r, keys, order);
  CHECK(found.woken == 1);
  CHECK(found.settled == 1);
  CHECK(ack(r, keys, order, found).empty());
  CHECK_FALSE(exists(r, c_key(keys, "held_shards", "one", "k")));
  CHECK_FALSE(exists(r, c_key(keys, "refusals", "one", "k")));
}

TEST_CASE(
    "ackWake stops waiting for a refused job's hold once its attempt is long past its "
    "deadline (the hold was lost with its master)",
    "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = same_key(r, keys, 2);
  REQUIRE(take(r, keys, 1) == std::vector<std::string>{f[0]});
  const auto taken = reserve(r, keys, 0, 10, kNowMs);
  REQUIRE(admit(r, keys, 0, taken, kNowMs) == std::vector<std::int64_t>{1});  // never held
  const WakeOrder order{"one", "k", 0, 1, -1};
  const std::int64_t later = kNowMs + 30000 + 10001;  // deadline + SETTLE_MS (admitJobs)
  CHECK(ack(r, keys, order, unhold(r, keys, order), later).empty());
  CHECK_FALSE(exists(r, c_key(keys, "held_shards", "one", "k")));
}

TEST_CASE(
    "ackWake stops waiting for a lost hold at its own deadline, however many refusals of the "
    "pair come after it",
    "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = same_key(r, keys, 3);
  REQUIRE(take(r, keys, 1) == std::vector<std::string>{f[0]});
  // f[1] refused, its hold lost with its master; f[2] refused 5 s later, its hold landed. Such
  // refusals come for as long as the lost one keeps the shard listed at its older stamp (the
  // pair's younger jobs, woken, are refused behind it): they must not put off the end of the
  // wait for the lost one, or the pair's jobs are never woken again.
  // The queue's next job, `field`, taken at `now` and refused by admitJobs.
  const auto refuse_next = [&](std::int64_t now, const std::string& field) {
    const auto taken = reserve(r, keys, 0, 1, now);
    REQUIRE(taken.size() == 1);
    REQUIRE(taken[0].field == field);
    REQUIRE(admit(r, keys, 0, taken, now) == std::vector<std::int64_t>{1});
  };
  refuse_next(kNowMs, f[1]);
  refuse_next(kNowMs + 5000, f[2]);
  hold(r, keys, 0, {{f[2], 1, "one", "k"}});
  const WakeOrder order{"one", "k", 0, 1, -1};
  // Past f[1]'s deadline + SETTLE_MS (admitJobs), not f[2]'s.
  const std::int64_t later = kNowMs + 30000 + 10001;
  auto found = unhold(r, keys, order);
  CHECK(found.woken == 1);  // f[2]
  CHECK(found.settled == 1);
  ack(r, keys, order, found, later);
  CHECK_FALSE(exists(r, c_key(keys, "refusals", "one", "k")));
  CHECK_FALSE(exists(r, c_key(keys, "held_shards", "one", "k")));
}

TEST_CASE("unholdJobs of a pair that holds nothing in the shard changes nothing", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto found = unhold(r, keys, {"one", "k", 3, 5, -1});
  CHECK(found.woken == 0);
  CHECK(found.oldest == -1);
  CHECK(found.settled == 0);
  CHECK(r.call({"KEYS", keys.prefix() + ":*"}).elements.empty());
}

TEST_CASE(
    "holdJobs leaves a job whose attempt moved on as it is but counts the refusal as settled; "
    "an admitted job gives up the unique claim it kept until it started",
    "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "one", {{"concurrency", 5}});
  PushArgs unique = constrained("one", "k");
  unique.unique_key = "u";
  unique.unique_until_started = true;
  auto f = fields_of(push_jobs(r, keys, 0, {unique}));
  const auto taken = reserve(r, keys, 0, 10, kNowMs);
  REQUIRE(taken.size() == 1);
  const std::string claim = keys.unique_prefix(0) + "email u";
  CHECK(exists(r, claim));  // a candidate has not started yet
  REQUIRE(admit(r, keys, 0, taken, kNowMs) == std::vector<std::int64_t>{0});
  CHECK(hold(r, keys, 0, {{f[0], 1, "", ""}}) ==
        std::vector<HoldJobs::Status>{HoldJobs::Status::done});
  CHECK_FALSE(exists(r, claim));

  // A stale hold (attempt 2 of a job running attempt 1) changes nothing but the settled count.
  const std::string before = job_buckets_dump(r, keys, 0);
  CHECK(hold(r, keys, 0, {{f[0], 2, "one", "k"}}) ==
        std::vector<HoldJobs::Status>{HoldJobs::Status::stale});
  CHECK(job_buckets_dump(r, keys, 0) == before);
  CHECK(hget(r, keys.held_prefix(0) + "settled", "one#k") == "1");
  CHECK_FALSE(exists(r, held_key(keys, 0, "one", "k")));
}

TEST_CASE(
    "reclassifyJobs gives a job its new constraints only if its record is as read, and "
    "sends a held job back to its queue",
    "[redis]") {
  using jq::redis::bindings::ReclassifyJobs;
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "one", {{"concurrency", 1}});
  auto f = fields_of(push_jobs(r, keys, 0, {constrained("one", "k"), constrained("one", "k"), {}}));
  REQUIRE(take(r, keys, 1) == std::vector<std::string>{f[0]});
  if (!joined_steps()) REQUIRE(take(r, keys, 1).empty());       // f[1] refused, held
  REQUIRE(take(r, keys, 1) == std::vector<std::string>{f[2]});  // the free job behind it
  auto as_read = [&](const std::string& field) { return *raw_record(r, keys, 0, field); };
  auto reclassify = [&](std::vector<ReclassifyJobs::Job> jobs) {
    auto n = ReclassifyJobs::decode(
        r.eval(ReclassifyJobs::call(ReclassifyJobs::keys(keys, 0), {0, std::move(jobs)})));
    REQUIRE(n);
    return *n;
  };

  // A record that changed since it was read is left alone.
  CHECK(reclassify({{f[1], "stale bytes", ""}}) == 0);
  CHECK(read_record(r, keys, 0, f[1])->blocked_by == "one");

  // The held job no longer matches anything: it leaves the held zset for the front of its queue.
  CHECK(reclassify({{f[1], as_read(f[1]), ""}}) == 1);
  CHECK(read_record(r, keys, 0, f[1])->constraints.empty());
  CHECK(read_record(r, keys, 0, f[1])->blocked_by.empty());
  CHECK_FALSE(exists(r, held_key(keys, 0, "one", "k")));
  CHECK(take(r, keys) == std::vector<std::string>{f[1]});

  // A running job is not reclassified.
  CHECK(reclassify({{f[0], as_read(f[0]), ""}}) == 0);
}

TEST_CASE("reapJobs answers the leases of the constrained attempts it reaped", "[redis]") {
  using jq::redis::bindings::ReapJobs;
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "one", {{"concurrency", 1}});
  auto f = fields_of(push_jobs(r, keys, 0, {constrained("one", "k"), {}}));
  REQUIRE(take(r, keys) == f);
  auto reaped =
      ReapJobs::decode(r.eval(ReapJobs::call(ReapJobs::keys(keys, 0), {kNowMs + 40000,
                                                                       kNowMs + 40000,
                                                                       100,
                                                                       "\xc0",
                                                                       "timeout",
                                                                       {1000, 60000, 0.0, 60},
                                                                       keys.events_channel(0),
                                                                       0})));
  REQUIRE(reaped);
  CHECK(reaped->reaped == 2);
  REQUIRE(reaped->leases.size() == 1);
  CHECK(reaped->leases[0].lease == lease_of(0, f[0]));
  CHECK(reaped->leases[0].constraints == packed(json::array({"one", "k"})));
}

TEST_CASE(
    "a unique_until started candidate whose admission was lost lets go of its claim when a later "
    "attempt is admitted",
    "[redis]") {
  using jq::redis::bindings::PromoteJobs;
  using jq::redis::bindings::ReapJobs;
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "one", {{"concurrency", 1}});
  PushArgs job = constrained("one", "k");
  job.unique_key = "u";
  job.unique_until_started = true;
  const auto f = fields_of(push_jobs(r, keys, 0, {job}));
  const std::string claim = keys.unique_prefix(0) + "email u";
  // A candidate keeps its claim until admitted; the admission's answer is lost, and the attempt
  // is reaped at its deadline, then retried.
  REQUIRE(reserve(r, keys, 0, 10, kNowMs).size() == 1);
  CHECK(exists(r, claim));
  const std::int64_t later = kNowMs + 40000;
  REQUIRE(ReapJobs::decode(r.eval(ReapJobs::call(
      ReapJobs::keys(keys, 0),
      {later, later, 100, "\xc0", "timeout", {1000, 60000, 0.0, 60}, keys.events_channel(0), 0}))));
  REQUIRE(PromoteJobs::decode(r.eval(PromoteJobs::call(
      PromoteJobs::keys(keys, 0), {later + 5000, 10, keys.events_channel(0), 0}))));
  // Its second attempt is admitted: it has started, and the name is free for a new job.
  const auto taken = reserve(r, keys, 0, 10, later + 5000);
  REQUIRE(taken.size() == 1);
  CHECK(taken[0].record.attempts == 2);
  REQUIRE(admit(r, keys, 0, taken, later + 5000) == std::vector<std::int64_t>{0});
  hold(r, keys, 0, {{f[0], 2, "", ""}});
  CHECK_FALSE(exists(r, claim));
  // That attempt given back (the worker busy): the job has still not started, and takes its
  // claim back.
  using jq::redis::bindings::ReleaseJob;
  auto released = ReleaseJob::decode(r.eval(ReleaseJob::call(
      ReleaseJob::keys(keys, 0, "email"), {f[0], 2, keys.events_channel(0), 0, "t"})));
  REQUIRE(released);
  CHECK(*released == ReleaseJob::Status::released);
  CHECK(r.call({"GET", claim}).str == f[0]);
}

TEST_CASE(
    "acks of two wakes of one shard that arrive out of order never let go of a shard that still "
    "holds jobs",
    "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const auto f = lined_up(r, keys, 3);
  const std::vector<std::string> a{f[0]}, b{f[1]}, c{f[2]};
  // b and c are refused, and their holds are still on their way when a first wake runs.
  const auto taken = reserve(r, keys, 0, 10, kNowMs);
  REQUIRE(admit(r, keys, 0, taken, kNowMs) == std::vector<std::int64_t>{1, 1});
  const WakeOrder order{"one", "k", 0, 1, -1};
  const auto first = unhold(r, keys, order);
  CHECK(first.woken == 0);
  hold(r, keys, 0, {{b[0], 1, "one", "k"}, {c[0], 1, "one", "k"}});
  const auto second = unhold(r, keys, order);
  CHECK(second.woken == 1);
  CHECK(second.oldest == kStampUs + 2);
  CHECK(second.at > first.at);
  ack(r, keys, order, second);
  // The first report comes last: it says the shard held nothing, which is no longer true.
  ack(r, keys, order, first);
  CHECK(zrange(r, c_key(keys, "held_shards", "one", "k")) ==
        std::vector<std::pair<std::string, std::int64_t>>{{"0", kStampUs + 2}});
  CHECK(zmembers(r, held_key(keys, 0, "one", "k")) == c);
}

TEST_CASE(
    "a slot freed while a refused job's hold is on its way goes to that job once the hold has "
    "landed, RETRY_MS later",
    "[redis]") {
  if (joined_steps()) return;  // joined, no hold is ever on its way
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  const auto f = lined_up(r, keys, 2);
  const std::vector<std::string> a{f[0]}, b{f[1]};
  const auto taken = reserve(r, keys, 0, 10, kNowMs);
  REQUIRE(admit(r, keys, 0, taken, kNowMs) == std::vector<std::int64_t>{1});
  events.take(r);
  // a ends before b's hold lands: the wake finds nothing there, and no shard after it.
  CHECK(hand_off(r, keys, complete(r, keys, a[0], packed(json::array({"one", "k"})))) == 0);
  CHECK(zscore(r, wake_due_key(keys), "one#k") == kNowMs + 20);
  const auto announced = events.take(r);
  CHECK(std::find(announced.begin(), announced.end(), "s " + std::to_string(kNowMs + 20)) !=
        announced.end());
  hold(r, keys, 0, {{b[0], 1, "one", "k"}});
  CHECK(hand_off(r, keys, wake_due(r, keys, kNowMs + 20).orders) == 1);
  CHECK(take(r, keys) == b);
}

TEST_CASE(
    "a job is admitted only after the older jobs its pair holds in its own shard, and a pair "
    "with room behind held jobs is due at once",
    "[redis]") {
  if (joined_steps()) return;  // the hand-off between two separate steps; joined, there is none
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const auto f = lined_up(r, keys, 3);
  const std::vector<std::string> a{f[0]}, b{f[1]}, c{f[2]};
  // Two reservations of the queue take b and c before either is refused.
  const auto first = reserve(r, keys, 0, 1, kNowMs);
  const auto second = reserve(r, keys, 0, 1, kNowMs);
  REQUIRE(admit(r, keys, 0, first, kNowMs) == std::vector<std::int64_t>{1});  // b: a runs
  // a ends; its slot's wake finds nothing held yet.
  hand_off(r, keys, complete(r, keys, a[0], packed(json::array({"one", "k"}))));
  // c is younger than b, which waits for its turn: c may not start first, and the pair is due.
  CHECK(admit(r, keys, 0, second, kNowMs) == std::vector<std::int64_t>{1});
  CHECK(zscore(r, wake_due_key(keys), "one#k") == kNowMs);
  hold(r, keys, 0, {{b[0], 1, "one", "k"}, {c[0], 1, "one", "k"}});
  CHECK(hand_off(r, keys, wake_due(r, keys, kNowMs).orders) == 1);
  CHECK(take(r, keys) == b);
}

TEST_CASE(
    "on one Redis releaseLeases runs the wake orders it gives in the same step, and no record "
    "of separate steps is kept",
    "[redis]") {
  // A one-node cluster (JQ_TEST_REDIS_CLUSTER) refuses scripts whose keys span hash tags.
  if (redis_cluster_mode()) return;
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  auto f = same_key(r, keys, 3);
  auto g = fields_of(push_jobs(r, keys, 1, {constrained("one", "k")}, kNowMs, kStampUs + 9));
  events.take(r);
  REQUIRE(take_joined(r, keys) == std::vector<std::string>{f[0]});
  REQUIRE(take_joined(r, keys, 10, kNowMs, 1).empty());
  // f[0] failed (or was given back, or reaped): its lease goes, and the oldest held job, in
  // shard 0, is ready when the call answers, with no order left for the master.
  CHECK(release(r, keys, {{lease_of(0, f[0]), packed(json::array({"one", "k"}))}}, kNowMs, true)
            .empty());
  CHECK(events.take(r) == std::vector<std::string>{"p email 0 0 " + member_of(r, keys, 0, f[1])});
  CHECK(take_joined(r, keys) == std::vector<std::string>{f[1]});
  CHECK(release(r, keys, {{lease_of(0, f[1]), packed(json::array({"one", "k"}))}}, kNowMs, true)
            .empty());
  CHECK(take_joined(r, keys) == std::vector<std::string>{f[2]});
  CHECK(release(r, keys, {{lease_of(0, f[2]), packed(json::array({"one", "k"}))}}, kNowMs, true)
            .empty());
  // Shard 0 holds nothing now: the hand-off went on to shard 1.
  CHECK(take_joined(r, keys, 10, kNowMs, 1) == std::vector<std::string>{g[0]});
  CHECK_FALSE(exists(r, c_key(keys, "held_shards", "one", "k")));
  for (const char* kind : {"refusals", "acked"}) {
    INFO(kind);
    CHECK_FALSE(exists(r, c_key(keys, kind, "one", "k")));
  }
  CHECK(hgetall(r, keys.held_prefix(0) + "settled").empty());
  CHECK(zmembers(r, wake_due_key(keys)).empty());
}

TEST_CASE(
    "on one Redis wakeConstraints runs its wake orders in the same step, at most a thousand "
    "jobs per call, and says when more are due at once",
    "[redis]") {
  using jq::redis::bindings::RemoveConstraint;
  // A one-node cluster (JQ_TEST_REDIS_CLUSTER) refuses scripts whose keys span hash tags.
  if (redis_cluster_mode()) return;
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = same_key(r, keys, 1201);
  REQUIRE(take_joined(r, keys, 1) == std::vector<std::string>{f[0]});
  // One reservation holds at most 1,000 jobs; the next holds the rest.
  REQUIRE(take_joined(r, keys, 1).empty());
  REQUIRE(take_joined(r, keys, 1).empty());
  REQUIRE(r.call({"ZCARD", held_key(keys, 0, "one", "k")}).integer == 1200);
  auto removed = RemoveConstraint::decode(r.eval(RemoveConstraint::call(
      RemoveConstraint::keys(keys), {"one", keys.constraint_channel(), kNowMs})));
  REQUIRE(removed);
  auto first = wake_due(r, keys, kNowMs, true);
  CHECK(first.orders.empty());
  CHECK(first.next_due_ms == kNowMs);  // due again now: the rest
  CHECK(r.call({"ZCARD", held_key(keys, 0, "one", "k")}).integer == 200);
  auto second = wake_due(r, keys, kNowMs, true);
  CHECK(second.orders.empty());
  CHECK(second.next_due_ms == -1);
  CHECK_FALSE(exists(r, held_key(keys, 0, "one", "k")));
  CHECK_FALSE(exists(r, c_key(keys, "held_shards", "one", "k")));
  // Every one is ready.
  auto started = take_joined(r, keys, 2000);
  std::sort(started.begin(), started.end());
  std::vector<std::string> held(f.begin() + 1, f.end());
  std::sort(held.begin(), held.end());
  CHECK(started == held);
}

// The scheduler lets reservations follow one another into a queue for as many jobs as reserveJobs
// says wait there: jobs held back by a constraint are not among them (the counts hash counts them
// as ready), else every idle endpoint would follow for them.
TEST_CASE("jobs held by a constraint are not among those reserveJobs says wait", "[redis]") {
  using jq::redis::bindings::ReserveJobs;
  // A one-node cluster (JQ_TEST_REDIS_CLUSTER) refuses scripts whose keys span hash tags.
  if (redis_cluster_mode()) return;
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "per-tenant", {{"concurrency", 1}});
  auto f = fields_of(push_jobs(r, keys, 0,
                               {constrained("per-tenant", "A"),
                                constrained("per-tenant", "A"),
                                constrained("per-tenant", "A"),
                                {}}));
  const auto reserve = [&] {
    auto reply = ReserveJobs::decode(r.eval(ReserveJobs::call(
        ReserveJobs::keys(keys, 0, "email", true), {kNowMs, 1, {}, "", "email", 0, "t"})));
    REQUIRE(reply);
    return *reply;
  };
  const auto first = reserve();
  REQUIRE(first.jobs.size() == 1);
  CHECK(first.jobs[0].field == f[0]);
  CHECK(first.ready == 3);
  const auto second = reserve();  // f[1] and f[2] held: the key is at its limit
  REQUIRE(second.jobs.size() == 1);
  CHECK(second.jobs[0].field == f[3]);
  CHECK(second.ready == 0);
  CHECK_FALSE(second.head);
  CHECK(hget(r, keys.counts(0), "ready:email").value_or("") == "2");
}
