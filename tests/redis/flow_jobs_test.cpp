// Delayed, unique and ordered jobs through the scripts that move them: pushJobs-10 stores them,
// reserveJobs-9, completeJobs-13, failJob-10, cancelJob-8 and retryDeadJob-6 let go of what they
// hold (contract: "The job", "Unique jobs", "Ordered jobs").
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
using jq::redis::bindings::CancelJob;
using jq::redis::bindings::CompleteJobs;
using jq::redis::bindings::FailJob;
using jq::redis::bindings::PromoteJobs;
using jq::redis::bindings::PushJobs;
using jq::redis::bindings::RetryDeadJob;
using jq::store::JobState;

namespace {

// {type: "failure", reason: "other"}
const std::string kFailure("\x82\xa4type\xa7\x66\x61ilure\xa6reason\xa5other", 27);

PushJobs::Pushed pushed(const Reply& reply, std::size_t jobs) {
  auto decoded = PushJobs::decode(reply, jobs);
  REQUIRE(decoded);
  return *decoded;
}

void complete(SyncRedis& r, const jq::redis::Keys& keys, const std::string& field, int attempt,
              std::int64_t now_ms = kNowMs) {
  CompleteJobs::Args args{3600, keys.events_channel(0), 0, now_ms, {{field, attempt, "\xc0"}}};
  auto status = CompleteJobs::decode(
      r.eval(CompleteJobs::call(CompleteJobs::keys(keys, 0), std::move(args))), 1);
  REQUIRE(status);
  REQUIRE(status->front() == CompleteJobs::Status::done);
}

FailJob::Status fail(SyncRedis& r, const jq::redis::Keys& keys, const std::string& field,
                     int attempt, bool retry) {
  auto failed =
      FailJob::decode(r.eval(FailJob::call(FailJob::keys(keys, 0), {field,
                                                                    attempt,
                                                                    kFailure,
                                                                    retry,
                                                                    "no",
                                                                    kNowMs,
                                                                    {1000, 300000, 0, 3600},
                                                                    keys.events_channel(0),
                                                                    0})));
  REQUIRE(failed);
  return failed->status;
}

CancelJob::Status cancel(SyncRedis& r, const jq::redis::Keys& keys, const std::string& field) {
  auto status = CancelJob::decode(r.eval(CancelJob::call(
      CancelJob::keys(keys, 0, field), {field, kNowMs, keys.events_channel(0), 0})));
  REQUIRE(status);
  return *status;
}

JobState state_of(SyncRedis& r, const jq::redis::Keys& keys, const std::string& field) {
  auto record = read_record(r, keys, 0, field);
  REQUIRE(record);
  return record->state;
}

// The fields reserveJobs takes of `name` now (at most 10).
std::vector<std::string> take(SyncRedis& r, const jq::redis::Keys& keys, const std::string& name) {
  Reply taken = reserve_jobs(r, keys, 0, name, 10);
  std::vector<std::string> fields;
  for (std::size_t i = 0; i < taken.elements.size(); i += 2) {
    fields.push_back(taken.elements[i].str);
  }
  return fields;
}

std::string line_of(const jq::redis::Keys& keys, const std::string& ordering_key) {
  return keys.order_prefix(0) + ordering_key;
}

std::vector<std::string> lrange(SyncRedis& r, const std::string& key) {
  std::vector<std::string> out;
  for (const Reply& e : r.call({"LRANGE", key, "0", "-1"}).elements) out.push_back(e.str);
  return out;
}

}  // namespace

// Delayed jobs.

TEST_CASE("a job with a future ready_at is scheduled at that time, counted and announced",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  const std::int64_t due = kNowMs + 5000;
  auto f = fields_of(push_jobs(r, keys, 0, {{.ready_at_ms = due}, {.ready_at_ms = kNowMs - 1}}));

  CHECK(state_of(r, keys, f[0]) == JobState::scheduled);
  CHECK(read_record(r, keys, 0, f[0])->ready_at_ms == due);
  CHECK(zscore(r, keys.scheduled(0), f[0]) == due);
  CHECK(state_of(r, keys, f[1]) == JobState::queued);  // a past ready_at is now
  CHECK(hgetall(r, keys.counts(0)) ==
        std::map<std::string, std::string>{{"ready:email", "1"}, {"scheduled:email", "1"}});
  CHECK(take(r, keys, "email") == std::vector<std::string>{f[1]});
  const auto messages = events.take(r);
  REQUIRE(messages.size() == 2);
  CHECK(messages[1] == "s " + std::to_string(due));
}

TEST_CASE("a scheduled delayed job can be cancelled", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {{.ready_at_ms = kNowMs + 60000}}));
  CHECK(cancel(r, keys, f[0]) == CancelJob::Status::cancelled);
  CHECK_FALSE(exists(r, keys.scheduled(0)));
  CHECK(hgetall(r, keys.counts(0)).empty());
}

// Unique jobs.

TEST_CASE("a push repeating a held unique claim stores nothing and names the holder", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto first = pushed(push_jobs(r, keys, 0, {{.unique_key = "order-7"}}), 1);
  REQUIRE(first.duplicates.empty());
  const std::string stats_before = dump(r, keys.stats(0));

  auto again = pushed(push_jobs(r, keys, 0, {{.unique_key = "order-7"}}), 1);
  CHECK(again.fields == first.fields);
  CHECK(again.duplicates == std::vector<std::size_t>{0});
  CHECK(dump(r, keys.stats(0)) == stats_before);  // no new sequence number, nothing pushed
  CHECK(record_count(r, keys, 0) == 1);

  // Another name with the same key is another claim.
  auto other = pushed(push_jobs(r, keys, 0, {{.name = "sms", .unique_key = "order-7"}}), 1);
  CHECK(other.duplicates.empty());
  CHECK(other.fields != first.fields);
}

TEST_CASE("a batch repeating its own unique key stores the first and points the rest at it",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto p = pushed(push_jobs(r, keys, 0, {{.unique_key = "k"}, {}, {.unique_key = "k"}}), 3);
  CHECK(p.duplicates == std::vector<std::size_t>{2});
  CHECK(p.fields[2] == p.fields[0]);
  CHECK(p.fields[1] != p.fields[0]);
  CHECK(record_count(r, keys, 0) == 2);
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"ready:email", "2"}});
}

TEST_CASE("a unique claim lasts unique_for at most", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  push_jobs(r, keys, 0, {{.unique_key = "k", .unique_for_ms = 5000}});
  const auto pttl = r.call({"PTTL", keys.unique_prefix(0) + "email k"}).integer;
  CHECK(pttl > 4000);
  CHECK(pttl <= 5000);
}

TEST_CASE("a unique job gives up its claim when it finishes: succeeded, dead or cancelled",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string claim = keys.unique_prefix(0) + "email k";

  SECTION("succeeded") {
    const std::string field = push_and_reserve(r, keys, 0, {.unique_key = "k"});
    CHECK(exists(r, claim));  // unique_until finished: running still holds it
    complete(r, keys, field, 1);
  }
  SECTION("dead") {
    const std::string field = push_and_reserve(r, keys, 0, {.unique_key = "k"});
    CHECK(fail(r, keys, field, 1, false) == FailJob::Status::dead);
  }
  SECTION("cancelled") {
    auto f = fields_of(push_jobs(r, keys, 0, {{.unique_key = "k"}}));
    CHECK(cancel(r, keys, f[0]) == CancelJob::Status::cancelled);
  }
  CHECK_FALSE(exists(r, claim));
  CHECK(pushed(push_jobs(r, keys, 0, {{.unique_key = "k"}}), 1).duplicates.empty());
}

TEST_CASE(
    "a unique_key is unique among the jobs of one ordering_key: other keys in the shard do not "
    "count, and finishing gives the claim up",
    "[redis]") {
  // Ordering keys route jobs to their shard: here two of them (and none) in one shard.
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto first = pushed(push_jobs(r, keys, 0,
                                {{.unique_key = "event:42", .ordering_key = "account:7"},
                                 {.unique_key = "event:42", .ordering_key = "account:9"},
                                 {.unique_key = "event:42"},
                                 {.unique_key = "event:42", .ordering_key = "account:9"}}),
                      4);
  CHECK(first.duplicates == std::vector<std::size_t>{3});  // only account 9's second
  CHECK(first.fields[3] == first.fields[1]);
  CHECK(record_count(r, keys, 0) == 3);
  // account:7's job runs and succeeds: its claim goes, the others stay.
  const auto taken = reserve_jobs(r, keys, 0, "email", 1, kNowMs);
  REQUIRE(taken.elements.size() == 2);
  REQUIRE(taken.elements[0].str == first.fields[0]);
  complete(r, keys, first.fields[0], 1);
  auto again = pushed(push_jobs(r, keys, 0,
                                {{.unique_key = "event:42", .ordering_key = "account:7"},
                                 {.unique_key = "event:42", .ordering_key = "account:9"}}),
                      2);
  CHECK(again.duplicates == std::vector<std::size_t>{1});
}

TEST_CASE(
    "a claim a job of an ordering key took under the name alone (an earlier build) still holds "
    "for that ordering key",
    "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const PushArgs job{.unique_key = "e", .ordering_key = "acct"};
  const std::string held = fields_of(push_jobs(r, keys, 0, {job}))[0];
  const std::string prefix = keys.unique_prefix(0);
  // As an earlier build named it: "<name> <unique_key>".
  REQUIRE(r.call({"RENAME", prefix + "email#4 accte", prefix + "email e"}).str == "OK");
  auto again =
      pushed(push_jobs(r, keys, 0, {job, {.unique_key = "e", .ordering_key = "other"}}), 2);
  CHECK(again.duplicates == std::vector<std::size_t>{0});
  CHECK(again.fields[0] == held);
  CHECK(record_count(r, keys, 0) == 2);
}

TEST_CASE("a retry keeps the unique claim", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string field = push_and_reserve(r, keys, 0, {.unique_key = "k"});
  CHECK(fail(r, keys, field, 1, true) == FailJob::Status::scheduled);
  CHECK(pushed(push_jobs(r, keys, 0, {{.unique_key = "k"}}), 1).duplicates.size() == 1);
}

TEST_CASE("unique_until started gives up the claim at the first attempt", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  push_and_reserve(r, keys, 0, {.unique_key = "k", .unique_until_started = true});
  CHECK_FALSE(exists(r, keys.unique_prefix(0) + "email k"));
  CHECK(pushed(push_jobs(r, keys, 0, {{.unique_key = "k"}}), 1).duplicates.empty());
}

TEST_CASE("a claim whose holder is gone is free", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  r.call({"SET", keys.unique_prefix(0) + "email k", "000000999"});
  CHECK(pushed(push_jobs(r, keys, 0, {{.unique_key = "k"}}), 1).duplicates.empty());
}

// Ordered jobs.

TEST_CASE("jobs of one ordering key run one at a time in push order, whatever their priority",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0,
                               {{.priority = 5, .ordering_key = "acct-1"},
                                {.priority = -5, .ordering_key = "acct-1"},
                                {.name = "sms", .ordering_key = "acct-1"},
                                {.priority = 9, .ordering_key = "acct-2"}}));
  CHECK(lrange(r, line_of(keys, "acct-1")) == std::vector<std::string>{f[0], f[1], f[2]});
  auto waiting = read_record(r, keys, 0, f[1]);
  CHECK(waiting->state == JobState::queued);
  CHECK(waiting->blocked_by == "ordering_key");
  CHECK(hgetall(r, keys.counts(0)) ==
        std::map<std::string, std::string>{{"ready:email", "3"}, {"ready:sms", "1"}});

  // Only the heads are candidates; acct-2 runs beside acct-1.
  CHECK(take(r, keys, "email") == std::vector<std::string>{f[0], f[3]});
  CHECK(take(r, keys, "sms").empty());

  complete(r, keys, f[0], 1);
  CHECK(read_record(r, keys, 0, f[1])->blocked_by.empty());
  CHECK(take(r, keys, "email") == std::vector<std::string>{f[1]});
  complete(r, keys, f[1], 1);
  CHECK(take(r, keys, "sms") == std::vector<std::string>{f[2]});  // another name, same line
  complete(r, keys, f[2], 1);
  CHECK_FALSE(exists(r, line_of(keys, "acct-1")));
}

TEST_CASE("a retry keeps its ordering key's head, and a dead job lets the next one go", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {{.ordering_key = "o"}, {.ordering_key = "o"}}));
  REQUIRE(take(r, keys, "email") == std::vector<std::string>{f[0]});
  CHECK(fail(r, keys, f[0], 1, true) == FailJob::Status::scheduled);
  CHECK(take(r, keys, "email").empty());  // the second still waits behind the retry
  CHECK(state_of(r, keys, f[1]) == JobState::queued);

  // Its second attempt, once due, fails for good.
  auto promoted = PromoteJobs::decode(r.eval(PromoteJobs::call(
      PromoteJobs::keys(keys, 0), {kNowMs + 2000, 100, keys.events_channel(0), 0})));
  REQUIRE(promoted);
  REQUIRE(take(r, keys, "email") == std::vector<std::string>{f[0]});
  CHECK(fail(r, keys, f[0], 2, false) == FailJob::Status::dead);
  CHECK(take(r, keys, "email") == std::vector<std::string>{f[1]});
}

TEST_CASE("cancelling the head lets the next job go, cancelling one waiting takes it out",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  auto f = fields_of(
      push_jobs(r, keys, 0, {{.ordering_key = "o"}, {.ordering_key = "o"}, {.ordering_key = "o"}}));
  events.take(r);
  CHECK(cancel(r, keys, f[1]) == CancelJob::Status::cancelled);
  CHECK(lrange(r, line_of(keys, "o")) == std::vector<std::string>{f[0], f[2]});
  CHECK(cancel(r, keys, f[0]) == CancelJob::Status::cancelled);
  CHECK(lrange(r, line_of(keys, "o")) == std::vector<std::string>{f[2]});
  const auto messages = events.take(r);
  REQUIRE(messages.size() == 1);
  CHECK(messages[0].rfind("p email 0 0 ", 0) == 0);  // the new head is announced
  CHECK(take(r, keys, "email") == std::vector<std::string>{f[2]});
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"running:email", "1"}});
}

TEST_CASE("an ordered job whose delay has not passed when its turn comes is scheduled", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::int64_t due = kNowMs + 60000;
  auto f = fields_of(
      push_jobs(r, keys, 0, {{.ordering_key = "o"}, {.ready_at_ms = due, .ordering_key = "o"}}));
  CHECK(state_of(r, keys, f[1]) == JobState::queued);  // waiting behind the first
  REQUIRE(take(r, keys, "email") == std::vector<std::string>{f[0]});
  complete(r, keys, f[0], 1);
  CHECK(state_of(r, keys, f[1]) == JobState::scheduled);
  CHECK(zscore(r, keys.scheduled(0), f[1]) == due);
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"scheduled:email", "1"}});
}

TEST_CASE("a dead ordered job retried by an operator joins the back of its line", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {{.ordering_key = "o"}, {.ordering_key = "o"}}));
  REQUIRE(take(r, keys, "email") == std::vector<std::string>{f[0]});
  REQUIRE(fail(r, keys, f[0], 1, false) == FailJob::Status::dead);
  auto status = RetryDeadJob::decode(r.eval(RetryDeadJob::call(
      RetryDeadJob::keys(keys, 0, f[0]), {f[0], kStampUs + 10, keys.events_channel(0), 0})));
  REQUIRE(status);
  CHECK(*status == RetryDeadJob::Status::ready);
  CHECK(lrange(r, line_of(keys, "o")) == std::vector<std::string>{f[1], f[0]});
  CHECK(read_record(r, keys, 0, f[0])->blocked_by == "ordering_key");
  CHECK(take(r, keys, "email") == std::vector<std::string>{f[1]});
}
