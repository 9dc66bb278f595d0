// The schedule scripts, each documented outcome: claimScheduleName-1 (compare-and-set of a
// name's claim), saveSchedule-1 (a record arriving or changing in place; tokens only grow),
// leaveSchedule-1 (the first step of a move), removeSchedule-2 (remove and fence, leaving
// tombstones) and fireSchedule-8 (a tick claimed and its job made in one step).
#include <catch2/catch.hpp>

#include "src/schedules/schedule_record.hpp"
#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::bindings::ClaimScheduleName;
using jq::redis::bindings::FireSchedule;
using jq::redis::bindings::LeaveSchedule;
using jq::redis::bindings::RemoveSchedule;
using jq::redis::bindings::SaveSchedule;
using jq::schedules::RecordStatus;
using jq::schedules::ScheduleRecord;

namespace {

constexpr int kShard = 2;
constexpr std::int64_t kTick = kNowMs + 60'000;

struct Fixture {
  SyncRedis r{shared_redis().port()};
  jq::redis::Keys keys = fresh_keys();

  ClaimScheduleName::Claimed claim(const std::string& expected, const std::string& claim) {
    auto out = ClaimScheduleName::decode(
        r.eval(ClaimScheduleName::call(ClaimScheduleName::keys(keys, 0), {"s", expected, claim})));
    REQUIRE(out);
    return *out;
  }
  auto save(SaveSchedule::Mode mode, std::int64_t token, std::int64_t version = 0,
            std::string carried = "", std::string definition = "def-1", std::int64_t next = kTick,
            std::int64_t read_next = kTick) {
    auto out = SaveSchedule::decode(r.eval(
        SaveSchedule::call(SaveSchedule::keys(keys, kShard),
                           {"s", mode, token, version, std::move(definition), kNowMs, next,
                            std::move(carried), keys.events_channel(kShard), kShard, read_next})));
    REQUIRE(out);
    return *out;
  }
  auto arrive(std::int64_t token, std::string carried = "") {
    return save(SaveSchedule::Mode::arrive, token, 0, std::move(carried));
  }
  auto leave(std::int64_t token, std::int64_t version, std::int64_t read_next = kTick,
             std::int64_t read_runs = 0) {
    auto out = LeaveSchedule::decode(r.eval(LeaveSchedule::call(
        LeaveSchedule::keys(keys, kShard),
        {"s", token, version, 5, token + 1, "def-2", kNowMs, kTick, kNowMs + 5000,
         keys.events_channel(kShard), kShard, read_next, read_runs})));
    REQUIRE(out);
    return *out;
  }
  RemoveSchedule::Status remove(std::int64_t token, RemoveSchedule::Mode mode,
                                const std::string& name = "s", std::int64_t now = kNowMs) {
    auto out = RemoveSchedule::decode(r.eval(
        RemoveSchedule::call(RemoveSchedule::keys(keys, kShard),
                             {name, token, mode, keys.events_channel(kShard), kShard, now})));
    REQUIRE(out);
    return *out;
  }
  bool in_schedules(const std::string& name) {
    return r.call({"HEXISTS", keys.schedules(kShard), name}).integer == 1;
  }
  std::optional<ScheduleRecord> record() {
    jq::redis::Reply raw = r.call({"HGET", keys.schedules(kShard), "s"});
    if (raw.is_nil()) return std::nullopt;
    auto decoded = jq::schedules::decode_schedule_record(raw.str);
    REQUIRE(decoded);
    return decoded;
  }
  // One tick (or a run now) of record `s` at token 1 as read at `version`.
  FireSchedule::Fired fire(FireSchedule::Args args) {
    args.name = "s";
    args.channel = keys.events_channel(kShard);
    args.shard = kShard;
    args.scheduled_at = "2023-11-14T23:14:20+01:00";
    args.now_ms = kNowMs;
    args.ready_stamp_us = kStampUs;
    if (args.job.name.empty()) {
      args.job.name = "report";
      args.job.argument = "\x81\xa1k\x01";
      args.job.max_retry = 3;
      args.job.timeout_ms = 30000;
      args.job.unique_for_ms = 60000;
    }
    auto out = FireSchedule::decode(
        r.eval(FireSchedule::call(FireSchedule::keys(keys, kShard), std::move(args))));
    REQUIRE(out);
    return *out;
  }
  FireSchedule::Args tick(std::int64_t version = 1, std::int64_t next = kTick) {
    FireSchedule::Args a;
    a.token = 1;
    a.version = version;
    a.next_tick_ms = next;
    a.after_ms = next + 60'000;
    a.scheduled_at_ms = next;
    return a;
  }
  std::string field_of(const std::string& id) { return id.substr(id.find('-') + 1); }
};

}  // namespace

TEST_CASE("claimScheduleName sets, refuses and removes a claim by compare-and-set", "[redis]") {
  Fixture f;
  CHECK(f.claim("", "2 1").done);
  auto taken = f.claim("", "3 2");
  CHECK_FALSE(taken.done);
  CHECK(taken.current == "2 1");
  CHECK(f.claim("2 1", "3 2 2 1").done);
  CHECK(f.r.call({"HGET", f.keys.schedule_homes(0), "s"}).str == "3 2 2 1");
  CHECK(f.claim("3 2 2 1", "").done);
  CHECK(f.r.call({"HEXISTS", f.keys.schedule_homes(0), "s"}).integer == 0);
  CHECK_FALSE(f.claim("3 2 2 1", "").done);
}

TEST_CASE(
    "saveSchedule writes an arriving record once, with what it counted elsewhere, and "
    "announces it",
    "[redis]") {
  Fixture f;
  EventListener events(shared_redis().port(), f.keys);
  ScheduleRecord counted;
  counted.runs = 4;
  counted.skipped = 1;
  counted.missed = 2;
  counted.duplicates = 3;
  counted.last_run_ms = kNowMs - 1000;
  counted.last_job_id = "7-000000001";
  auto saved = f.arrive(3, jq::schedules::encode_carried(counted));
  CHECK(saved.status == SaveSchedule::Status::saved);
  CHECK(saved.version == 1);
  auto r = f.record();
  REQUIRE(r);
  CHECK(r->status == RecordStatus::active);
  CHECK(r->token == 3);
  CHECK(r->definition == "def-1");
  CHECK(r->next_ms == kTick);
  CHECK(r->anchor_ms == kNowMs);
  CHECK(r->runs == 4);
  CHECK(r->skipped == 1);
  CHECK(r->missed == 2);
  CHECK(r->duplicates == 3);
  CHECK(r->last_job_id == "7-000000001");
  CHECK(events.take(f.r) == std::vector<std::string>{"t 2 s"});

  // The same token again (a second master finishing the same move): nothing changes.
  CHECK(f.arrive(3).status == SaveSchedule::Status::already);
  // An older token: its writer was overtaken.
  CHECK(f.arrive(2).status == SaveSchedule::Status::overtaken);
  // A newer token while a live record holds the name: refused.
  CHECK(f.arrive(4).status == SaveSchedule::Status::taken);
  CHECK(f.record()->token == 3);
  CHECK(events.take(f.r).empty());
}

TEST_CASE("saveSchedule changes a record in place only from the version read", "[redis]") {
  Fixture f;
  f.arrive(1);
  auto updated = f.save(SaveSchedule::Mode::update, 1, 1, "", "def-2", kTick + 5);
  CHECK(updated.status == SaveSchedule::Status::saved);
  CHECK(updated.version == 2);
  CHECK(f.record()->definition == "def-2");
  CHECK(f.record()->next_ms == kTick + 5);

  auto stale = f.save(SaveSchedule::Mode::update, 1, 1, "", "def-3");
  CHECK(stale.status == SaveSchedule::Status::changed);
  CHECK(stale.version == 2);
  CHECK(f.save(SaveSchedule::Mode::update, 9, 2).status == SaveSchedule::Status::not_found);
  CHECK(f.record()->definition == "def-2");
  REQUIRE(f.leave(1, 2, kTick + 5).status == LeaveSchedule::Status::leaving);
  CHECK(f.save(SaveSchedule::Mode::update, 1, 3).status == SaveSchedule::Status::changed);
}

TEST_CASE("a change read before a tick was made does not bring that tick back", "[redis]") {
  // A PATCH (or a move, or a master's start writing its config's schedules) reads the record,
  // a tick is made meanwhile, then the change writes: with the next tick it read, that tick would
  // be due again and made a second time.
  Fixture f;
  f.arrive(1);
  REQUIRE(f.fire(f.tick()).status == FireSchedule::Status::made);
  REQUIRE(f.record()->next_ms == kTick + 60'000);
  const bool move = GENERATE(false, true);
  if (move) {
    CHECK(f.leave(1, 1, kTick, 1).status == LeaveSchedule::Status::changed);
  } else {
    CHECK(f.save(SaveSchedule::Mode::update, 1, 1, "", "def-2", kTick, kTick).status ==
          SaveSchedule::Status::changed);
  }
  CHECK(f.record()->next_ms == kTick + 60'000);
  CHECK(f.fire(f.tick()).status == FireSchedule::Status::changed);
  CHECK(record_count(f.r, f.keys, kShard) == 1);
  // Read again, the change goes through.
  if (move) {
    CHECK(f.leave(1, 1, kTick + 60'000, 1).status == LeaveSchedule::Status::leaving);
  } else {
    CHECK(f.save(SaveSchedule::Mode::update, 1, 1, "", "def-2", kTick + 60'000, kTick + 60'000)
              .status == SaveSchedule::Status::saved);
  }
}

TEST_CASE("a move read before a run now does not lose what it counted", "[redis]") {
  // A move carries the record's counts there: read before a run now (which moves neither the
  // version nor the next tick), it would carry one run less and the last job before it.
  Fixture f;
  f.arrive(1);
  auto now = f.tick();
  now.mode = FireSchedule::Mode::now;
  REQUIRE(f.fire(now).status == FireSchedule::Status::made);
  CHECK(f.leave(1, 1, kTick, 0).status == LeaveSchedule::Status::changed);
  CHECK(f.record()->status == RecordStatus::active);
  // Read again, the move goes through.
  CHECK(f.leave(1, 1, kTick, 1).status == LeaveSchedule::Status::leaving);
  CHECK(f.record()->runs == 1);
}

TEST_CASE("leaveSchedule stops a record ticking and keeps where it goes", "[redis]") {
  Fixture f;
  EventListener events(shared_redis().port(), f.keys);
  f.arrive(1);
  CHECK(f.leave(1, 5).status == LeaveSchedule::Status::changed);
  CHECK(f.leave(2, 1).status == LeaveSchedule::Status::not_found);
  auto left = f.leave(1, 1);
  CHECK(left.status == LeaveSchedule::Status::leaving);
  CHECK(left.version == 2);
  auto r = f.record();
  CHECK(r->status == RecordStatus::leaving);
  CHECK(r->next_ms == kNowMs + 5000);  // when any master finishes the move
  REQUIRE(r->to);
  CHECK(r->to->shard == 5);
  CHECK(r->to->token == 2);
  CHECK(r->to->definition == "def-2");
  CHECK(r->to->next_ms == kTick);
  CHECK(events.take(f.r) == std::vector<std::string>{"t 2 s", "t 2 s"});
  // A leaving record makes no job.
  CHECK(f.fire(f.tick(2)).status == FireSchedule::Status::not_found);
}

TEST_CASE("removeSchedule leaves a tombstone that refuses the token and older ones", "[redis]") {
  Fixture f;
  EventListener events(shared_redis().port(), f.keys);
  f.arrive(2);
  CHECK(f.remove(1, RemoveSchedule::Mode::remove) == RemoveSchedule::Status::not_found);
  CHECK(f.remove(2, RemoveSchedule::Mode::remove) == RemoveSchedule::Status::done);
  CHECK(f.record()->status == RecordStatus::gone);
  CHECK(f.remove(2, RemoveSchedule::Mode::remove) == RemoveSchedule::Status::not_found);
  CHECK(f.arrive(2).status == SaveSchedule::Status::overtaken);
  CHECK(f.arrive(1).status == SaveSchedule::Status::overtaken);
  CHECK(events.take(f.r) == std::vector<std::string>{"t 2 s", "t 2 s"});
  // A newer token replaces the tombstone.
  CHECK(f.arrive(3).status == SaveSchedule::Status::saved);
}

TEST_CASE("removeSchedule's fence keeps a token that was not written from ever arriving",
          "[redis]") {
  Fixture f;
  CHECK(f.remove(4, RemoveSchedule::Mode::fence) == RemoveSchedule::Status::fenced);
  CHECK(f.record()->status == RecordStatus::gone);
  CHECK(f.arrive(4).status == SaveSchedule::Status::overtaken);
  CHECK(f.arrive(5).status == SaveSchedule::Status::saved);
  // A live record of that token: nothing changes.
  CHECK(f.remove(5, RemoveSchedule::Mode::fence) == RemoveSchedule::Status::done);
  CHECK(f.record()->status == RecordStatus::active);
  // Another token's live record is never replaced by a fence (its saves are refused anyway).
  CHECK(f.remove(6, RemoveSchedule::Mode::fence) == RemoveSchedule::Status::fenced);
  CHECK(f.record()->status == RecordStatus::active);
  CHECK(f.record()->token == 5);
}

TEST_CASE("a tombstone goes a day after it was written, swept by a later one", "[redis]") {
  Fixture f;
  constexpr std::int64_t kDayMs = 86'400'000;
  // "s": removed, then created again under a newer token (its tombstone replaced by a live
  // record); "old": fenced; both at kNowMs.
  f.arrive(2);
  REQUIRE(f.remove(2, RemoveSchedule::Mode::remove) == RemoveSchedule::Status::done);
  REQUIRE(f.arrive(3).status == SaveSchedule::Status::saved);
  REQUIRE(f.remove(7, RemoveSchedule::Mode::fence, "old") == RemoveSchedule::Status::fenced);
  // Within the day a tombstone written stays, and sweeps nothing.
  REQUIRE(f.remove(8, RemoveSchedule::Mode::fence, "recent", kNowMs + kDayMs - 1) ==
          RemoveSchedule::Status::fenced);
  CHECK(f.in_schedules("old"));
  CHECK(f.r.call({"ZCARD", f.keys.schedule_tombstones(kShard)}).integer == 3);
  // A day and a millisecond later the next one sweeps the tombstone of "old", keeps the live
  // record of "s" (only its entry in the zset goes) and the tombstone of "recent".
  REQUIRE(f.remove(9, RemoveSchedule::Mode::fence, "new", kNowMs + kDayMs + 1) ==
          RemoveSchedule::Status::fenced);
  CHECK_FALSE(f.in_schedules("old"));
  CHECK(f.record()->status == RecordStatus::active);
  CHECK(f.record()->token == 3);
  CHECK(f.in_schedules("recent"));
  CHECK(f.in_schedules("new"));
  CHECK(f.r.call({"ZRANGE", f.keys.schedule_tombstones(kShard), "0", "-1"}).elements.size() == 2);
}

TEST_CASE("fireSchedule claims a tick and makes its job in one step", "[redis]") {
  Fixture f;
  f.arrive(1);
  EventListener events(shared_redis().port(), f.keys);
  auto fired = f.fire(f.tick());
  REQUIRE(fired.status == FireSchedule::Status::made);
  CHECK(fired.job_id.starts_with("2-"));
  const auto job = read_record(f.r, f.keys, kShard, f.field_of(fired.job_id));
  REQUIRE(job);
  CHECK(job->name == "report");
  CHECK(job->state == jq::store::JobState::queued);
  CHECK(job->schedule == "s");
  CHECK(job->scheduled_at == "2023-11-14T23:14:20+01:00");
  CHECK(job->enqueued_at_ms == kNowMs);
  CHECK(ready_queue(f.r, f.keys, kShard, "report").size() == 1);
  CHECK(f.r.call({"HGET", f.keys.counts(kShard), "ready:report"}).str == "1");
  CHECK(f.r.call({"HGET", f.keys.stats(kShard), "pushed"}).str == "1");
  CHECK(f.r.call({"SISMEMBER", f.keys.names(kShard), "report"}).integer == 1);
  const auto messages = events.take(f.r);
  REQUIRE(messages.size() == 1);
  CHECK(messages[0].starts_with("p report 2 0 "));

  const auto r = f.record();
  CHECK(r->next_ms == kTick + 60'000);
  CHECK(r->runs == 1);
  CHECK(r->last_run_ms == kTick);
  CHECK(r->last_job_id == fired.job_id);
  CHECK(r->version == 1);  // ticks do not change the definition's version

  // The same tick again (a second master): refused, nothing made.
  CHECK(f.fire(f.tick()).status == FireSchedule::Status::changed);
  CHECK(record_count(f.r, f.keys, kShard) == 1);
}

TEST_CASE("fireSchedule refuses a tick computed from another version or token", "[redis]") {
  Fixture f;
  f.arrive(1);
  CHECK(f.fire(f.tick(2)).status == FireSchedule::Status::changed);
  auto other_token = f.tick();
  other_token.token = 2;
  CHECK(f.fire(other_token).status == FireSchedule::Status::not_found);
  CHECK(record_count(f.r, f.keys, kShard) == 0);
  CHECK(f.record()->next_ms == kTick);
}

TEST_CASE("fireSchedule counts missed ticks, and under skip makes no job", "[redis]") {
  Fixture f;
  f.arrive(1);
  auto skip = f.tick();
  skip.action = FireSchedule::Action::skip;
  skip.missed = 3;
  CHECK(f.fire(skip).status == FireSchedule::Status::missed);
  CHECK(record_count(f.r, f.keys, kShard) == 0);
  CHECK(f.record()->missed == 3);
  CHECK(f.record()->next_ms == kTick + 60'000);

  auto run_once = f.tick(1, kTick + 60'000);
  run_once.missed = 2;
  CHECK(f.fire(run_once).status == FireSchedule::Status::made);
  CHECK(f.record()->missed == 5);
  CHECK(f.record()->runs == 1);
}

TEST_CASE("fireSchedule with overlap skip waits for the previous job to finish", "[redis]") {
  Fixture f;
  f.arrive(1);
  const auto first = f.fire(f.tick());
  REQUIRE(first.status == FireSchedule::Status::made);
  auto second = f.tick(1, kTick + 60'000);
  second.overlap_skip = true;
  const auto skipped = f.fire(second);
  CHECK(skipped.status == FireSchedule::Status::overlap);
  CHECK(skipped.job_id == first.job_id);
  CHECK(f.record()->skipped == 1);
  CHECK(f.record()->next_ms == kTick + 120'000);
  CHECK(record_count(f.r, f.keys, kShard) == 1);

  // The previous job finished (here: it died): the next tick makes its job.
  auto dead = read_record(f.r, f.keys, kShard, f.field_of(first.job_id));
  dead->state = jq::store::JobState::dead;
  const RecordAt at = record_at(f.r, f.keys, kShard, f.field_of(first.job_id));
  f.r.call({"HSET", at.bucket, at.slot, pack_record(*dead)});
  auto third = f.tick(1, kTick + 120'000);
  third.overlap_skip = true;
  CHECK(f.fire(third).status == FireSchedule::Status::made);
}

TEST_CASE("fireSchedule counts a tick whose job would be a duplicate of a held unique key",
          "[redis]") {
  Fixture f;
  f.arrive(1);
  auto first = f.tick();
  first.job.name = "sync";
  first.job.unique_key = "tenant-1";
  first.job.unique_for_ms = 60000;
  const auto made = f.fire(first);
  REQUIRE(made.status == FireSchedule::Status::made);
  auto second = f.tick(1, kTick + 60'000);
  second.job = first.job;
  const auto duplicate = f.fire(second);
  CHECK(duplicate.status == FireSchedule::Status::duplicate);
  CHECK(duplicate.job_id == made.job_id);
  CHECK(f.record()->duplicates == 1);
  CHECK(f.record()->runs == 1);
  CHECK(f.record()->next_ms == kTick + 120'000);
}

TEST_CASE("fireSchedule puts a job of an ordering key behind the one ahead of it", "[redis]") {
  Fixture f;
  f.arrive(1);
  auto first = f.tick();
  first.job.name = "ordered";
  first.job.ordering_key = "acct-9";
  first.job.argument = "\xc0";
  first.job.timeout_ms = 1000;
  REQUIRE(f.fire(first).status == FireSchedule::Status::made);
  auto second = f.tick(1, kTick + 60'000);
  second.job = first.job;
  const auto behind = f.fire(second);
  REQUIRE(behind.status == FireSchedule::Status::made);
  CHECK(read_record(f.r, f.keys, kShard, f.field_of(behind.job_id))->blocked_by == "ordering_key");
  CHECK(ready_queue(f.r, f.keys, kShard, "ordered").size() == 1);
  CHECK(f.r.call({"LLEN", f.keys.order_prefix(kShard) + "acct-9"}).integer == 2);
}

TEST_CASE("fireSchedule's run now makes a job at once and leaves the timetable alone", "[redis]") {
  Fixture f;
  f.arrive(1);
  auto now = f.tick();
  now.mode = FireSchedule::Mode::now;
  now.next_tick_ms = 0;     // not compared
  now.overlap_skip = true;  // not applied
  CHECK(f.fire(now).status == FireSchedule::Status::made);
  CHECK(f.fire(now).status == FireSchedule::Status::made);
  CHECK(f.record()->next_ms == kTick);
  CHECK(f.record()->runs == 2);
  CHECK(record_count(f.r, f.keys, kShard) == 2);
}
