// ScheduleStore against a real Redis: where a schedule lives, its changes, its ticks, and what a
// master that dies between two steps leaves behind, finished or cleared by the next step on the
// name (each crash is made by running the steps before it by hand).
#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <nlohmann/json.hpp>

#include "src/redis/bindings/fire_schedule.hpp"
#include "src/redis/bindings/schedule_writes.hpp"
#include "src/redis/client.hpp"
#include "src/schedules/runner.hpp"
#include "src/schedules/schedule_store.hpp"
#include "src/store/job_routing.hpp"
#include "tests/store/store_test_support.hpp"
#include "tests/support/tcp_forwarder.hpp"

using jq::schedules::FireOutcome;
using jq::schedules::RecordStatus;
using jq::schedules::ScheduleRecord;
using jq::schedules::ScheduleStore;
using jq::schedules::StoredSchedule;
using jq::store::StoreErrc;
using namespace jq::test;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

constexpr int kShards = 8;

jq::api::Schedule schedule(const std::string& name, json job = {{"name", "report"}},
                           json more = json::object()) {
  json body = {{"name", name}, {"every", 60}, {"job", std::move(job)}};
  body.update(more);
  auto s = jq::api::decode_schedule(body.dump(), jq::api::MediaType::json);
  REQUIRE(s);
  return *s;
}

struct Fixture {
  StoreHarness h{shared_redis().port()};
  TestClock clock{kEpoch};
  jq::redis::Keys keys = fresh_keys();
  ScheduleStore store{h.client(), keys, kShards, clock.fn(), jq::api::JobDefaults{}};
  SyncRedis r{shared_redis().port()};

  StoredSchedule create(jq::api::Schedule s) {
    auto created = h.run(store.create(std::move(s)));
    REQUIRE(created);
    return *created;
  }
  jq::Expected<StoredSchedule, jq::store::StoreError> get(const std::string& name) {
    return h.run(store.get(name));
  }
  std::string claim(const std::string& name) {
    return r.call({"HGET", keys.schedule_homes(jq::store::hashed_shard(name, kShards)), name}).str;
  }
  std::optional<ScheduleRecord> record(int shard, const std::string& name) {
    auto raw = r.call({"HGET", keys.schedules(shard), name});
    if (raw.is_nil()) return std::nullopt;
    return jq::schedules::decode_schedule_record(raw.str);
  }
  // The shard an ordering key routes to: a template with it lives there.
  static int shard_of_key(const std::string& key) { return jq::store::hashed_shard(key, kShards); }
};

// Two ordering keys that route to different shards, neither the name's home.
std::pair<std::string, std::string> keys_apart(const std::string& name) {
  const int home = jq::store::hashed_shard(name, kShards);
  std::string a;
  for (int i = 0;; ++i) {
    std::string k = "key-" + std::to_string(i);
    const int shard = jq::store::hashed_shard(k, kShards);
    if (shard == home) continue;
    if (a.empty()) {
      a = k;
    } else if (shard != jq::store::hashed_shard(a, kShards)) {
      return {a, k};
    }
  }
}

}  // namespace

TEST_CASE("ScheduleStore: a schedule lives in its name's shard and its claim names it", "[redis]") {
  Fixture f;
  const auto created = f.create(schedule("hourly"));
  const int home = jq::store::hashed_shard("hourly", kShards);
  CHECK(created.shard == home);
  CHECK(created.record.next_ms == jq::epoch_ms(kEpoch) + 60'000);
  CHECK(f.claim("hourly") == std::to_string(home) + " " + std::to_string(created.record.token));
  const auto read = f.get("hourly");
  REQUIRE(read);
  CHECK(read->schedule == created.schedule);

  const auto again = f.h.run(f.store.create(schedule("hourly")));
  REQUIRE_FALSE(again);
  CHECK(again.error().code == StoreErrc::conflict);
  CHECK(f.get("never").error().code == StoreErrc::not_found);
}

TEST_CASE("ScheduleStore: a template with an ordering key puts the schedule in that key's shard",
          "[redis]") {
  Fixture f;
  const auto [key, other] = keys_apart("ordered");
  const auto created = f.create(schedule("ordered", {{"name", "sync"}, {"ordering_key", key}}));
  CHECK(created.shard == Fixture::shard_of_key(key));
  REQUIRE(f.record(created.shard, "ordered"));
  CHECK(f.get("ordered")->shard == created.shard);
  // The name is still unique: a second schedule of that name elsewhere is refused.
  const auto elsewhere =
      f.h.run(f.store.create(schedule("ordered", {{"name", "sync"}, {"ordering_key", other}})));
  REQUIRE_FALSE(elsewhere);
  CHECK(elsewhere.error().code == StoreErrc::conflict);
}

TEST_CASE(
    "ScheduleStore: a change that routes the jobs elsewhere moves the schedule with what "
    "it counted",
    "[redis]") {
  Fixture f;
  const auto [from_key, to_key] = keys_apart("moving");
  const auto created = f.create(schedule("moving", {{"name", "sync"}, {"ordering_key", from_key}}));
  // One tick made in the old shard.
  auto fired =
      f.h.run(f.store.fire(created, jq::schedules::TickPlan{true, created.record.next_ms, 0,
                                                            created.record.next_ms + 60'000}));
  REQUIRE(fired);
  REQUIRE(*fired);

  auto moved =
      f.h.run(f.store.replace(schedule("moving", {{"name", "sync"}, {"ordering_key", to_key}})));
  REQUIRE(moved);
  CHECK(moved->shard == Fixture::shard_of_key(to_key));
  CHECK(moved->record.runs == 1);
  CHECK(moved->record.next_ms == created.record.next_ms + 60'000);  // same timetable
  CHECK(f.record(created.shard, "moving")->status == RecordStatus::gone);
  CHECK(f.h.run(f.store.list())->size() == 1);
  // The record left behind cannot tick.
  auto stale = f.h.run(f.store.fire(created, jq::schedules::TickPlan{true, 1, 0, 2}));
  REQUIRE(stale);
  CHECK_FALSE(*stale);
}

TEST_CASE("ScheduleStore: a move left after its first step is finished by the next request",
          "[redis]") {
  Fixture f;
  const auto [from_key, to_key] = keys_apart("half");
  const auto created = f.create(schedule("half", {{"name", "sync"}, {"ordering_key", from_key}}));
  const auto next = schedule("half", {{"name", "sync"}, {"ordering_key", to_key}});
  const int to_shard = Fixture::shard_of_key(to_key);
  using jq::redis::bindings::LeaveSchedule;
  // The master that began the move died right after leaveSchedule.
  auto left = LeaveSchedule::decode(
      f.r.eval(LeaveSchedule::call(LeaveSchedule::keys(f.keys, created.shard),
                                   {"half", created.record.token, created.record.version, to_shard,
                                    created.record.token + 100, jq::api::encode_schedule(next), 5,
                                    created.record.next_ms, 1, f.keys.events_channel(created.shard),
                                    created.shard, created.record.next_ms, created.record.runs})));
  REQUIRE(left);
  REQUIRE(left->status == LeaveSchedule::Status::leaving);

  SECTION("a read finishes it") {
    const auto read = f.get("half");
    REQUIRE(read);
    CHECK(read->shard == to_shard);
    CHECK(read->schedule == next);
  }
  SECTION("any master's runner finishes it") {
    REQUIRE(f.h.run(f.store.finish_leaving(created.shard, "half")));
    CHECK(f.record(to_shard, "half")->status == RecordStatus::active);
  }
  CHECK(f.record(created.shard, "half")->status == RecordStatus::gone);
  CHECK(f.claim("half").starts_with(std::to_string(to_shard) + " "));
}

TEST_CASE(
    "ScheduleStore: a move whose claim moved but whose record was not written yet is "
    "finished from the leaving record",
    "[redis]") {
  Fixture f;
  const auto [from_key, to_key] = keys_apart("claimed");
  const auto created =
      f.create(schedule("claimed", {{"name", "sync"}, {"ordering_key", from_key}}));
  const auto next = schedule("claimed", {{"name", "sync"}, {"ordering_key", to_key}});
  const int to_shard = Fixture::shard_of_key(to_key);
  const std::int64_t to_token = created.record.token + 100;
  using jq::redis::bindings::ClaimScheduleName;
  using jq::redis::bindings::LeaveSchedule;
  REQUIRE(LeaveSchedule::decode(
      f.r.eval(LeaveSchedule::call(LeaveSchedule::keys(f.keys, created.shard),
                                   {"claimed", created.record.token, created.record.version,
                                    to_shard, to_token, jq::api::encode_schedule(next), 5,
                                    created.record.next_ms, 1, f.keys.events_channel(created.shard),
                                    created.shard, created.record.next_ms, created.record.runs}))));
  const std::string old_claim = f.claim("claimed");
  const std::string new_claim = std::to_string(to_shard) + " " + std::to_string(to_token) + " " +
                                std::to_string(created.shard) + " " +
                                std::to_string(created.record.token);
  REQUIRE(ClaimScheduleName::decode(
              f.r.eval(ClaimScheduleName::call(
                  ClaimScheduleName::keys(f.keys, jq::store::hashed_shard("claimed", kShards)),
                  {"claimed", old_claim, new_claim})))
              ->done);
  // Dead here. A create of the name must not take it: the schedule is moving, not gone.
  const auto create = f.h.run(f.store.create(schedule("claimed")));
  REQUIRE_FALSE(create);
  CHECK(create.error().code == StoreErrc::conflict);
  CHECK(f.record(to_shard, "claimed")->status == RecordStatus::active);
  CHECK(f.record(created.shard, "claimed")->status == RecordStatus::gone);
  CHECK(f.claim("claimed") == new_claim);
}

TEST_CASE(
    "ScheduleStore: a claim whose create died before its record is free, and that create "
    "can never write it late",
    "[redis]") {
  Fixture f;
  const int home = jq::store::hashed_shard("orphan", kShards);
  using jq::redis::bindings::ClaimScheduleName;
  using jq::redis::bindings::SaveSchedule;
  // The first create took a token and claimed the name, then died (or stalled).
  const std::int64_t token =
      f.r.call({"HINCRBY", f.keys.stats(home), "schedule_token", "1"}).integer;
  const std::string claim = std::to_string(home) + " " + std::to_string(token);
  REQUIRE(
      ClaimScheduleName::decode(f.r.eval(ClaimScheduleName::call(
                                    ClaimScheduleName::keys(f.keys, home), {"orphan", "", claim})))
          ->done);
  const auto created = f.create(schedule("orphan"));
  CHECK(created.record.token > token);
  // The first create wakes up and writes its record: refused.
  auto late = SaveSchedule::decode(f.r.eval(SaveSchedule::call(
      SaveSchedule::keys(f.keys, home), {"orphan", SaveSchedule::Mode::arrive, token, 0, "def", 0,
                                         0, "", f.keys.events_channel(home), home})));
  REQUIRE(late);
  CHECK(late->status != SaveSchedule::Status::saved);
  CHECK(f.get("orphan")->record.token == created.record.token);
}

TEST_CASE(
    "ScheduleStore: a create whose record was written but whose answer was lost (a proxy's "
    "error) leaves a schedule GET and DELETE find, not one that fires unseen",
    "[redis]") {
  TcpForwarder forwarder(shared_redis().port());
  StoreHarness h(forwarder.port());
  TestClock clock{kEpoch};
  const jq::redis::Keys keys = fresh_keys();
  ScheduleStore store{h.client(), keys, kShards, clock.fn(), jq::api::JobDefaults{}};
  SyncRedis r{shared_redis().port()};
  const int home = jq::store::hashed_shard("lost", kShards);

  forwarder.replace_answer("saveSchedule", "-ERR upstream timed out\r\n");
  const auto created = h.run(store.create(schedule("lost")));
  CHECK_FALSE(created);
  REQUIRE(forwarder.replaced() == 1);
  REQUIRE_FALSE(r.call({"HGET", keys.schedules(home), "lost"}).is_nil());  // the save ran

  // The schedule is the one the API shows.
  const auto read = h.run(store.get("lost"));
  REQUIRE(read);
  CHECK(read->shard == home);
  REQUIRE(h.run(store.remove("lost")));
  const auto raw = r.call({"HGET", keys.schedules(home), "lost"});
  REQUIRE_FALSE(raw.is_nil());
  CHECK(jq::schedules::decode_schedule_record(raw.str)->status == RecordStatus::gone);
}

TEST_CASE("ScheduleStore: a delete that died before removing the claim leaves the name free",
          "[redis]") {
  Fixture f;
  const auto created = f.create(schedule("gone"));
  using jq::redis::bindings::RemoveSchedule;
  REQUIRE(RemoveSchedule::decode(
      f.r.eval(RemoveSchedule::call(RemoveSchedule::keys(f.keys, created.shard),
                                    {"gone", created.record.token, RemoveSchedule::Mode::remove,
                                     f.keys.events_channel(created.shard), created.shard}))));
  CHECK(f.get("gone").error().code == StoreErrc::not_found);
  CHECK(f.h.run(f.store.list())->empty());
  f.create(schedule("gone"));
  CHECK(f.get("gone"));
}

TEST_CASE("ScheduleStore: patch, pause and resume recompute the next tick from now", "[redis]") {
  Fixture f;
  const auto created = f.create(schedule("p"));
  f.clock.advance(30s);
  jq::api::SchedulePatch pause;
  pause.paused = true;
  pause.values.paused = true;
  auto paused = f.h.run(f.store.patch("p", pause));
  REQUIRE(paused);
  CHECK(paused->record.next_ms == 0);
  f.clock.advance(600s);  // paused time is not missed
  jq::api::SchedulePatch resume;
  resume.paused = true;
  auto resumed = f.h.run(f.store.patch("p", resume));
  REQUIRE(resumed);
  // every: 60 from the creation: the first tick after now on that grid.
  CHECK(resumed->record.next_ms == jq::epoch_ms(kEpoch) + 660'000);
  jq::api::SchedulePatch every;
  every.every = true;
  every.values.every_s = 10;
  auto changed = f.h.run(f.store.patch("p", every));
  REQUIRE(changed);
  CHECK(changed->record.next_ms == jq::epoch_ms(kEpoch) + 640'000);  // 10 s from now
  CHECK(changed->record.version == created.record.version + 3);
}

TEST_CASE("ScheduleStore: run now makes a job, or names the job holding its unique key",
          "[redis]") {
  Fixture f;
  f.create(schedule("now", {{"name", "sync"}, {"unique_key", "acct"}}));
  auto first = f.h.run(f.store.run_now("now"));
  REQUIRE(first);
  CHECK(first->outcome == FireOutcome::made);
  auto second = f.h.run(f.store.run_now("now"));
  REQUIRE(second);
  CHECK(second->outcome == FireOutcome::duplicate);
  CHECK(second->job_id == first->job_id);
  CHECK(f.get("now")->record.runs == 1);
  CHECK(f.get("now")->record.duplicates == 0);  // a run now is not a tick
  CHECK(f.h.run(f.store.run_now("nothing")).error().code == StoreErrc::not_found);
}

TEST_CASE("ScheduleStore: remove and apply", "[redis]") {
  Fixture f;
  REQUIRE(f.h.run(f.store.apply(schedule("cfg"))));
  REQUIRE(f.h.run(f.store.apply(schedule("cfg", {{"name", "other"}}))));
  CHECK(f.get("cfg")->schedule.job == schedule("cfg", {{"name", "other"}}).job);
  REQUIRE(f.h.run(f.store.remove("cfg")));
  CHECK(f.claim("cfg").empty());
  CHECK(f.h.run(f.store.remove("cfg")).error().code == StoreErrc::not_found);
}

TEST_CASE("ScheduleStore: tombstones an older master left unnoted are swept a day after a load",
          "[redis]") {
  // A master before the tombstones zset wrote tombstones it did not note there: they stayed in
  // the schedules hash for ever.
  Fixture f;
  const auto old = f.create(schedule("old"));
  REQUIRE(f.h.run(f.store.remove("old")));
  const std::string tombstones = f.keys.schedule_tombstones(old.shard);
  REQUIRE(f.r.call({"ZREM", tombstones, "old"}).integer == 1);  // as the older master left it
  REQUIRE(f.record(old.shard, "old")->status == RecordStatus::gone);

  f.clock.advance(1h);
  REQUIRE(f.h.run(f.store.load_shard(old.shard)));
  const auto noted_at =
      std::chrono::duration_cast<std::chrono::milliseconds>((kEpoch + 1h).time_since_epoch());
  CHECK(f.r.call({"ZSCORE", tombstones, "old"}).as_integer() == noted_at.count());

  // A day after it was noted, the next tombstone written in the shard sweeps it.
  std::string other;
  for (int i = 0; other.empty(); ++i) {
    const std::string name = "other-" + std::to_string(i);
    if (jq::store::hashed_shard(name, kShards) == old.shard) other = name;
  }
  f.create(schedule(other));
  f.clock.advance(24h + 1ms);
  REQUIRE(f.h.run(f.store.remove(other)));
  CHECK_FALSE(f.record(old.shard, "old"));
  CHECK(f.r.call({"ZSCORE", tombstones, "old"}).is_nil());
}

TEST_CASE("ScheduleStore: a backlog of unnoted tombstones is noted whole, each once", "[redis]") {
  Fixture f;
  const auto first = f.create(schedule("first"));
  REQUIRE(f.h.run(f.store.remove("first")));
  const std::string tombstones = f.keys.schedule_tombstones(first.shard);
  // More than one ZADD takes, as an older master left them (in the hash, not in the zset).
  const std::string gone = f.r.call({"HGET", f.keys.schedules(first.shard), "first"}).str;
  for (int i = 0; i < 1100; ++i) {
    f.r.call({"HSET", f.keys.schedules(first.shard), "legacy-" + std::to_string(i), gone});
  }
  f.clock.advance(1h);
  REQUIRE(f.h.run(f.store.load_shard(first.shard)));
  CHECK(f.r.call({"ZCARD", tombstones}).integer == 1101);
  const auto at = [&](const std::string& name) {
    return f.r.call({"ZSCORE", tombstones, name}).as_integer();
  };
  const auto first_noted = at("first");  // when it was written, not when loaded
  const auto legacy_noted = at("legacy-1099");
  CHECK(*legacy_noted == *first_noted + 3'600'000);
  // A later load keeps when each was noted.
  f.clock.advance(1h);
  REQUIRE(f.h.run(f.store.load_shard(first.shard)));
  CHECK(at("first") == first_noted);
  CHECK(at("legacy-1099") == legacy_noted);
}

// A Runner on its own io_context, driven by the test's thread, over a store on `port` (Redis,
// or a forwarder in front of it) with the test's clock; `schedule` created before it starts.
// With `clock_follows` the test's wall clock moves with the steady one, as a real one does.
struct RunnerHarness {
  RunnerHarness(std::uint16_t port, jq::api::Schedule schedule, bool clock_follows)
      : client(io.get_executor(),
               *jq::redis::parse_target("redis://127.0.0.1:" + std::to_string(port)),
               jq::redis::ConnectionOptions{}),
        follows(clock_follows),
        name(schedule.name),
        home(jq::store::hashed_shard(name, kShards)) {
    client.start();
    REQUIRE(drive_until([&] { return client.ready(); }, 5s));
    std::optional<bool> created;
    boost::asio::co_spawn(
        io,
        [&]() -> boost::asio::awaitable<void> {
          created = bool(co_await store.create(std::move(schedule)));
        },
        boost::asio::detached);
    REQUIRE(drive_until([&] { return created.has_value(); }, 5s));
    REQUIRE(*created);
    runner.start();
    drive_until([] { return false; }, 300ms);  // loaded, asleep until the first tick
  }
  ~RunnerHarness() {
    runner.stop();
    client.stop();
    drive_until([] { return false; }, 100ms);
  }

  bool drive_until(const std::function<bool()>& done, std::chrono::milliseconds most) {
    const auto end = std::chrono::steady_clock::now() + most;
    while (!done() && std::chrono::steady_clock::now() < end) {
      io.run_one_for(5ms);
      const auto now = std::chrono::steady_clock::now();
      const auto moved = std::chrono::duration_cast<std::chrono::milliseconds>(now - last);
      if (follows) clock.advance(moved);
      last += moved;
    }
    return done();
  }
  ScheduleRecord record() {
    auto raw = r.call({"HGET", keys.schedules(home), name});
    REQUIRE_FALSE(raw.is_nil());
    return *jq::schedules::decode_schedule_record(raw.str);
  }

  boost::asio::io_context io;
  jq::redis::Client client;
  TestClock clock{kEpoch};
  bool follows;
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
  const jq::redis::Keys keys = fresh_keys();
  ScheduleStore store{client, keys, kShards, clock.fn(), jq::api::JobDefaults{}};
  jq::schedules::Runner runner{io, store};
  SyncRedis r{shared_redis().port()};
  std::string name;
  int home;
};

// The runner sleeps on the steady clock towards a time on the wall clock: a wall clock that
// moves on by itself (a step, a VM resumed, here the test's clock) must not leave the tick late.
TEST_CASE("Runner: a tick is made in time when the wall clock reaches it before the sleep ends",
          "[redis]") {
  RunnerHarness h(shared_redis().port(), schedule("soon"), false);
  CHECK(h.record().runs == 0);
  h.clock.advance(60s);  // the wall clock is there; the steady clock is 59.7 s short of it
  CHECK(h.drive_until([&] { return h.record().runs == 1; }, 3s));
  CHECK(h.record().missed == 0);
}

// A tick whose fire Redis refused for a moment (over its maxmemory, a reconnect) is tried again
// soon enough to be made within the second it may be late, not a second later as missed.
TEST_CASE("Runner: a tick refused by Redis for a moment is made, not missed", "[redis]") {
  TcpForwarder forwarder(shared_redis().port());
  RunnerHarness h(forwarder.port(), schedule("blip", {{"name", "report"}}, {{"missed", "skip"}}),
                  true);
  forwarder.refuse("fireSchedule", "-OOM command not allowed when used memory > 'maxmemory'.\r\n",
                   2);
  h.clock.advance(60s);  // the tick's time
  CHECK(h.drive_until([&] { return h.record().runs == 1; }, 4s));
  CHECK(forwarder.refused() == 2);
  CHECK(h.record().missed == 0);
}
