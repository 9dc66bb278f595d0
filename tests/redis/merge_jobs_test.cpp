// pushJobs-10 merging duplicates (contract: "Merging duplicates"): a push with on_duplicate
// replace or append folds into the job holding its unique claim while that job has not started,
// and the job moves to where its new priority, ready time and constraints put it, from every
// place a waiting job can be (docs/REDIS.md): a ready list, the scheduled set, a constraint's
// held set, an ordering key's line.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/redis/constraint_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
using jq::redis::bindings::PushJobs;
using jq::store::JobState;
using nlohmann::json;
using Mode = PushJobs::OnDuplicate;

namespace {

PushJobs::Pushed pushed(const Reply& reply, std::size_t jobs) {
  auto decoded = PushJobs::decode(reply, jobs);
  REQUIRE(decoded);
  return *decoded;
}

// A push of unique key "u" with `mode`, argument `argument`.
PushArgs unique(Mode mode, const json& argument, std::int32_t priority = 0,
                std::int64_t ready_at_ms = 0) {
  PushArgs job;
  job.argument = packed(argument);
  job.priority = priority;
  job.ready_at_ms = ready_at_ms;
  job.unique_key = "u";
  job.unique_until_started = mode != Mode::keep;
  job.on_duplicate = mode;
  return job;
}

jq::store::JobRecord record_of(SyncRedis& r, const jq::redis::Keys& keys,
                               const std::string& field) {
  auto record = read_record(r, keys, 0, field);
  REQUIRE(record);
  return *record;
}

json argument_of(SyncRedis& r, const jq::redis::Keys& keys, const std::string& field) {
  return json::from_msgpack(record_of(r, keys, field).argument);
}

std::string claim_of(const jq::redis::Keys& keys) {
  return keys.unique_prefix(0) + "email u";
}

}  // namespace

// Answers and values.

TEST_CASE("keep stores nothing and changes nothing of the waiting job", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto first = fields_of(push_jobs(r, keys, 0, {unique(Mode::keep, "a1")}));
  const std::string buckets = job_buckets_dump(r, keys, 0);

  auto again = pushed(push_jobs(r, keys, 0, {unique(Mode::keep, "a2", -5)}), 1);
  CHECK(again.fields == first);
  CHECK(again.duplicates == std::vector<std::size_t>{0});
  CHECK(again.merged.empty());
  CHECK(job_buckets_dump(r, keys, 0) == buckets);
}

TEST_CASE("replace takes the push's argument and priority, keeps the id and answers merged",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto first = fields_of(push_jobs(r, keys, 0, {unique(Mode::replace, {{"v", 1}}, 5)}));
  const std::string stats = dump(r, keys.stats(0));

  auto again = pushed(push_jobs(r, keys, 0, {unique(Mode::replace, {{"v", 2}})}), 1);
  CHECK(again.fields == first);
  CHECK(again.duplicates == std::vector<std::size_t>{0});
  CHECK(again.merged == std::vector<std::size_t>{0});
  CHECK(argument_of(r, keys, first[0]) == json{{"v", 2}});
  CHECK(record_of(r, keys, first[0]).priority == 0);  // the push gave none: the default
  CHECK(record_of(r, keys, first[0]).appended == 0);
  CHECK(dump(r, keys.stats(0)) == stats);  // nothing new pushed
  CHECK(record_count(r, keys, 0) == 1);
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"ready:email", "1"}});
}

TEST_CASE("append lists the pushed arguments in push order, byte for byte, from the first push",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto first = fields_of(push_jobs(r, keys, 0, {unique(Mode::append, {{"n", 1}}, 3)}));
  CHECK(argument_of(r, keys, first[0]) == json::array({{{"n", 1}}}));
  CHECK(record_of(r, keys, first[0]).appended == 1);

  // A float32 that a decode and encode would widen stays as it was sent.
  const std::string float32("\xca\x3f\xc0\x00\x00", 5);  // 1.5f
  PushArgs odd = unique(Mode::append, nullptr, 7);
  odd.argument = float32;
  auto second = pushed(push_jobs(r, keys, 0, {odd}), 1);
  CHECK(second.fields == first);
  CHECK(second.merged == std::vector<std::size_t>{0});
  push_jobs(r, keys, 0, {unique(Mode::append, "third", 1)});

  const auto record = record_of(r, keys, first[0]);
  CHECK(record.appended == 3);
  CHECK(record.argument == std::string("\x93\x81\xa1n\x01", 5) + float32 + "\xa5third");
  CHECK(record.priority == 1);  // the smallest pushed
}

TEST_CASE("a batch merges into its own earlier job, and the last replace wins", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto p = pushed(push_jobs(r, keys, 0,
                            {unique(Mode::append, 1),
                             unique(Mode::append, 2),
                             {},
                             unique(Mode::keep, 3),
                             unique(Mode::append, 4)}),
                  5);
  CHECK(p.fields[1] == p.fields[0]);
  CHECK(p.fields[3] == p.fields[0]);
  CHECK(p.fields[4] == p.fields[0]);
  CHECK(p.duplicates == std::vector<std::size_t>{1, 3, 4});
  CHECK(p.merged == std::vector<std::size_t>{1, 4});
  CHECK(argument_of(r, keys, p.fields[0]) == json::array({1, 2, 4}));
  CHECK(hget(r, keys.stats(0), "pushed") == "2");

  auto q =
      pushed(push_jobs(r, keys, 0, {unique(Mode::replace, "x", 9), unique(Mode::replace, "y")}), 2);
  CHECK(q.merged == std::vector<std::size_t>{0, 1});
  CHECK(argument_of(r, keys, p.fields[0]) == "y");
  CHECK(record_of(r, keys, p.fields[0]).priority == 0);
}

TEST_CASE("append after replace starts a list with the replaced argument, replace ends a list",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {unique(Mode::replace, "a")}));
  push_jobs(r, keys, 0, {unique(Mode::append, "b")});
  CHECK(argument_of(r, keys, f[0]) == json::array({"a", "b"}));
  CHECK(record_of(r, keys, f[0]).appended == 2);
  push_jobs(r, keys, 0, {unique(Mode::replace, "c")});
  CHECK(argument_of(r, keys, f[0]) == "c");
  CHECK(record_of(r, keys, f[0]).appended == 0);
}

TEST_CASE("at 1000 elements the next append makes a new job, which takes over the claim",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  std::vector<PushArgs> batch;
  for (int i = 0; i < 1001; ++i) batch.push_back(unique(Mode::append, i));
  auto p = pushed(push_jobs(r, keys, 0, batch), batch.size());
  const std::string full = p.fields[0];
  CHECK(p.fields[999] == full);
  CHECK(p.fields[1000] != full);
  CHECK(p.merged.size() == 999);
  const auto listed = argument_of(r, keys, full);
  REQUIRE(listed.size() == 1000);
  CHECK(listed[999] == 999);
  CHECK(record_of(r, keys, full).appended == 1000);
  CHECK(argument_of(r, keys, p.fields[1000]) == json::array({1000}));
  CHECK(r.call({"GET", claim_of(keys)}).str == p.fields[1000]);

  // The next push merges into the new holder; the full one stays as it is.
  auto next = pushed(push_jobs(r, keys, 0, {unique(Mode::append, 1001)}), 1);
  CHECK(next.fields[0] == p.fields[1000]);
  CHECK(argument_of(r, keys, p.fields[1000]) == json::array({1000, 1001}));
  CHECK(record_of(r, keys, full).appended == 1000);
}

TEST_CASE("a list that would pass its byte limit makes a new job instead", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string ten(9, 'x');  // a str of 10 bytes packed
  auto first =
      fields_of(push_jobs(r, keys, 0, {unique(Mode::append, ten)}, kNowMs, kStampUs, "", 32));
  auto second =
      pushed(push_jobs(r, keys, 0, {unique(Mode::append, ten)}, kNowMs, kStampUs, "", 32), 1);
  CHECK(second.fields == first);  // 1 + 10 + 10 = 21 bytes
  auto third =
      pushed(push_jobs(r, keys, 0, {unique(Mode::append, ten)}, kNowMs, kStampUs, "", 32), 1);
  CHECK(third.fields == first);  // 31
  auto fourth =
      pushed(push_jobs(r, keys, 0, {unique(Mode::append, ten)}, kNowMs, kStampUs, "", 32), 1);
  CHECK(fourth.fields != first);  // 41 > 32
  CHECK(fourth.duplicates.empty());
  CHECK(record_of(r, keys, first[0]).appended == 3);
  CHECK(r.call({"GET", claim_of(keys)}).str == fourth.fields[0]);
}

TEST_CASE("a merge renews the claim for the push's unique_for", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  PushArgs short_claim = unique(Mode::replace, 1);
  short_claim.unique_for_ms = 2000;
  push_jobs(r, keys, 0, {short_claim});
  PushArgs long_claim = unique(Mode::replace, 2);
  long_claim.unique_for_ms = 600000;
  push_jobs(r, keys, 0, {long_claim});
  CHECK(r.call({"PTTL", claim_of(keys)}).integer > 500000);
}

// Jobs that have started are never merged into.

TEST_CASE("a merging push makes a new job once the holder has started", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string running = push_and_reserve(r, keys, 0, unique(Mode::append, 1));
  CHECK_FALSE(exists(r, claim_of(keys)));
  auto next = pushed(push_jobs(r, keys, 0, {unique(Mode::append, 2)}), 1);
  CHECK(next.duplicates.empty());
  CHECK(next.fields[0] != running);
  CHECK(argument_of(r, keys, running) == json::array({1}));
  CHECK(argument_of(r, keys, next.fields[0]) == json::array({2}));
}

TEST_CASE(
    "a merging push while its holder waits for its constraints' admission makes a new job, "
    "nothing lost",
    "[redis]") {
  if (joined_steps()) return;  // joined, the admission is part of the reservation: no wait
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "one", {{"concurrency", 1}});
  PushArgs first = unique(Mode::append, 1);
  first.constraints = packed(json::array({"one", "A"}));
  const auto f = fields_of(push_jobs(r, keys, 0, {first}));
  const auto candidates = reserve(r, keys, 0, 1, kNowMs);
  REQUIRE(candidates.size() == 1);
  REQUIRE(candidates[0].field == f[0]);
  REQUIRE(exists(r, claim_of(keys)));  // kept until the admission says
  PushArgs second = first;
  second.argument = packed(2);
  const auto next = pushed(push_jobs(r, keys, 0, {second}, kNowMs, kStampUs + 1), 1);
  CHECK(next.duplicates.empty());
  REQUIRE(next.fields[0] != f[0]);
  CHECK(argument_of(r, keys, next.fields[0]) == json::array({2}));
  CHECK(argument_of(r, keys, f[0]) == json::array({1}));
  // The new job holds the claim: a third push merges into it.
  PushArgs third = first;
  third.argument = packed(3);
  const auto last = pushed(push_jobs(r, keys, 0, {third}, kNowMs, kStampUs + 2), 1);
  CHECK(last.fields[0] == next.fields[0]);
  CHECK(argument_of(r, keys, next.fields[0]) == json::array({2, 3}));
}

TEST_CASE("a running holder of a finished-claim is a plain duplicate to a merging push",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string running = push_and_reserve(r, keys, 0, unique(Mode::keep, "kept"));
  const std::string buckets = job_buckets_dump(r, keys, 0);
  auto next = pushed(push_jobs(r, keys, 0, {unique(Mode::replace, "new", -1)}), 1);
  CHECK(next.fields[0] == running);
  CHECK(next.duplicates == std::vector<std::size_t>{0});
  CHECK(next.merged.empty());
  CHECK(job_buckets_dump(r, keys, 0) == buckets);
}

TEST_CASE("a waiting holder of a finished-claim merged by replace gives its claim up at start",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {unique(Mode::keep, "kept")}));
  push_jobs(r, keys, 0, {unique(Mode::replace, "new")});
  CHECK(take(r, keys) == f);
  CHECK_FALSE(exists(r, claim_of(keys)));
}

// Every place a waiting job can be.

TEST_CASE("a ready job merged to a new priority moves to that priority's list, announced",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto before = fields_of(push_jobs(r, keys, 0, {{.priority = 2}, {.priority = 2}}));
  auto f = fields_of(push_jobs(r, keys, 0, {unique(Mode::replace, 1, 5)}, kNowMs, kStampUs + 1));
  auto after = fields_of(push_jobs(r, keys, 0, {{.priority = 2}}, kNowMs, kStampUs + 2));
  EventListener events(shared_redis().port(), keys);

  push_jobs(r, keys, 0, {unique(Mode::replace, 2, 2)}, kNowMs, kStampUs + 3);
  const std::string member = base62(kStampUs + 3, 9) + f[0];
  CHECK(member_of(r, keys, 0, f[0]) == member);
  CHECK(events.take(r) == std::vector<std::string>{"p email 0 2 " + member});
  // At the back of priority 2 (it joined that list now), and priority 5 is gone.
  CHECK(ready_queue(r, keys, 0, "email") ==
        std::vector<std::pair<std::string, std::int64_t>>{{member_of(r, keys, 0, before[0]), 2},
                                                          {member_of(r, keys, 0, before[1]), 2},
                                                          {member_of(r, keys, 0, after[0]), 2},
                                                          {member, 2}});
  CHECK(take(r, keys) == std::vector<std::string>{before[0], before[1], after[0], f[0]});
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"running:email", "4"}});
}

TEST_CASE("a ready job moved out of the middle of a list is taken once, in its new place",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto a = fields_of(push_jobs(r, keys, 0, {{.priority = 1}}));
  auto f = fields_of(push_jobs(r, keys, 0, {unique(Mode::append, 1, 1)}, kNowMs, kStampUs + 1));
  auto b = fields_of(push_jobs(r, keys, 0, {{.priority = 1}}, kNowMs, kStampUs + 2));
  push_jobs(r, keys, 0, {unique(Mode::append, 2, 0)}, kNowMs, kStampUs + 3);
  // Its old member stays in the middle of priority 1's list; its record no longer names it.
  CHECK(take(r, keys) == std::vector<std::string>{f[0], a[0], b[0]});
  CHECK(take(r, keys).empty());
}

TEST_CASE("a ready job merged with the same priority keeps its turn", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {unique(Mode::replace, 1)}));
  auto later = fields_of(push_jobs(r, keys, 0, {{}}, kNowMs, kStampUs + 1));
  const std::string member = member_of(r, keys, 0, f[0]);
  push_jobs(r, keys, 0, {unique(Mode::replace, 2)}, kNowMs, kStampUs + 2);
  CHECK(member_of(r, keys, 0, f[0]) == member);
  CHECK(take(r, keys) == std::vector<std::string>{f[0], later[0]});
}

TEST_CASE("replace with a ready time ahead debounces a ready job into the scheduled set",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, {unique(Mode::replace, 1)}));
  EventListener events(shared_redis().port(), keys);
  const std::int64_t due = kNowMs + 10000;
  push_jobs(r, keys, 0, {unique(Mode::replace, 2, 0, due)});

  const auto record = record_of(r, keys, f[0]);
  CHECK(record.state == JobState::scheduled);
  CHECK(record.ready_at_ms == due);
  CHECK(zscore(r, keys.scheduled(0), f[0]) == due);
  CHECK(ready_queue(r, keys, 0, "email").empty());
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"scheduled:email", "1"}});
  CHECK(events.take(r) == std::vector<std::string>{"s " + std::to_string(due)});

  // Each later push moves it again: the job runs `delay` after the last one.
  push_jobs(r, keys, 0, {unique(Mode::replace, 3, 0, due + 5000)});
  CHECK(zscore(r, keys.scheduled(0), f[0]) == due + 5000);
  CHECK(argument_of(r, keys, f[0]) == 3);
}

TEST_CASE("a scheduled job keeps its time unless a replace gives one, a time passed makes it ready",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::int64_t due = kNowMs + 10000;
  auto f = fields_of(push_jobs(r, keys, 0, {unique(Mode::replace, 1, 4, due)}));

  push_jobs(r, keys, 0, {unique(Mode::replace, 2, 3)});  // no ready time given
  CHECK(zscore(r, keys.scheduled(0), f[0]) == due);
  CHECK(record_of(r, keys, f[0]).priority == 3);
  push_jobs(r, keys, 0, {unique(Mode::append, 3, 1, kNowMs + 99999)});  // append keeps the time
  CHECK(zscore(r, keys.scheduled(0), f[0]) == due);
  CHECK(record_of(r, keys, f[0]).priority == 1);

  EventListener events(shared_redis().port(), keys);
  push_jobs(r, keys, 0, {unique(Mode::replace, 4, 2, kNowMs)}, kNowMs, kStampUs + 7);
  CHECK(record_of(r, keys, f[0]).state == JobState::queued);
  CHECK_FALSE(exists(r, keys.scheduled(0)));
  const std::string member = base62(kStampUs + 7, 9) + f[0];
  CHECK(ready_queue(r, keys, 0, "email") ==
        std::vector<std::pair<std::string, std::int64_t>>{{member, 2}});
  CHECK(hgetall(r, keys.counts(0)) == std::map<std::string, std::string>{{"ready:email", "1"}});
  CHECK(events.take(r) == std::vector<std::string>{"p email 0 2 " + member});
}

TEST_CASE("a held job merged with the same constraint keys stays held, in its turn", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "one", {{"concurrency", 1}});
  PushArgs first = unique(Mode::append, {{"t", "A"}});
  first.constraints = packed(json::array({"one", "A"}));
  auto running = fields_of(push_jobs(r, keys, 0, {constrained("one", "A")}));
  auto f = fields_of(push_jobs(r, keys, 0, {first}, kNowMs, kStampUs + 1));
  CHECK(take(r, keys) == running);
  REQUIRE(record_of(r, keys, f[0]).blocked_by == "one");

  PushArgs second = first;
  second.argument = packed({{"t", "A"}, {"n", 2}});
  second.priority = -3;
  push_jobs(r, keys, 0, {second}, kNowMs, kStampUs + 2);
  const auto record = record_of(r, keys, f[0]);
  CHECK(record.blocked_by == "one");
  CHECK(record.priority == -3);
  CHECK(zmembers(r, held_key(keys, 0, "one", "A")) == f);
  CHECK(hgetall(r, keys.held_waiting(0, "one")) == std::map<std::string, std::string>{{"A", "1"}});
  // The slot frees (the hand-off wakes it, or completeJobs did with the steps joined): it runs,
  // with both arguments.
  hand_off(r, keys, complete(r, keys, running[0], packed(json::array({"one", "A"}))));
  CHECK(take(r, keys) == f);
  CHECK(argument_of(r, keys, f[0]) == json::array({{{"t", "A"}}, {{"t", "A"}, {"n", 2}}}));
}

TEST_CASE(
    "a held job merged to other constraint keys leaves the held set for the front of its list",
    "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "one", {{"concurrency", 1}});
  PushArgs first = unique(Mode::replace, {{"t", "A"}});
  first.constraints = packed(json::array({"one", "A"}));
  auto running = fields_of(push_jobs(r, keys, 0, {constrained("one", "A")}));
  auto f = fields_of(push_jobs(r, keys, 0, {first}, kNowMs, kStampUs + 1));
  CHECK(take(r, keys) == running);
  const std::string old_member = member_of(r, keys, 0, f[0]);
  auto other = fields_of(push_jobs(r, keys, 0, {{}}, kNowMs, kStampUs + 2));
  EventListener events(shared_redis().port(), keys);

  PushArgs moved = unique(Mode::replace, {{"t", "B"}});
  moved.constraints = packed(json::array({"one", "B"}));
  push_jobs(r, keys, 0, {moved}, kNowMs, kStampUs + 3);
  const auto record = record_of(r, keys, f[0]);
  CHECK(record.blocked_by.empty());
  CHECK(record.constraints == std::vector<std::string>{"one", "B"});
  CHECK_FALSE(exists(r, held_key(keys, 0, "one", "A")));
  CHECK(hgetall(r, keys.held_waiting(0, "one")).empty());
  CHECK(member_of(r, keys, 0, f[0]) == old_member);  // its old turn, at the front
  CHECK(events.take(r) == std::vector<std::string>{"p email 0 0 " + old_member});
  CHECK(take(r, keys) == std::vector<std::string>{f[0], other[0]});  // key B is free
}

TEST_CASE("a held job debounced into the future leaves the held set for the scheduled set",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "one", {{"concurrency", 1}});
  PushArgs first = unique(Mode::replace, 1);
  first.constraints = packed(json::array({"one", "k"}));
  auto running = fields_of(push_jobs(r, keys, 0, {constrained("one", "k")}));
  auto f = fields_of(push_jobs(r, keys, 0, {first}, kNowMs, kStampUs + 1));
  CHECK(take(r, keys) == running);

  PushArgs later = first;
  later.ready_at_ms = kNowMs + 5000;
  push_jobs(r, keys, 0, {later});
  CHECK(record_of(r, keys, f[0]).state == JobState::scheduled);
  CHECK(record_of(r, keys, f[0]).blocked_by.empty());
  CHECK(zscore(r, keys.scheduled(0), f[0]) == kNowMs + 5000);
  CHECK_FALSE(exists(r, held_key(keys, 0, "one", "k")));
  CHECK(hgetall(r, keys.held_waiting(0, "one")).empty());
  CHECK(hgetall(r, keys.counts(0)) ==
        std::map<std::string, std::string>{{"running:email", "1"}, {"scheduled:email", "1"}});
}

TEST_CASE("a job waiting in its ordering key's line takes the merge and enters with it later",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  PushArgs head;
  head.ordering_key = "o";
  PushArgs waiting = unique(Mode::replace, 1, 0);
  waiting.ordering_key = "o";
  auto h = fields_of(push_jobs(r, keys, 0, {head}));
  auto f = fields_of(push_jobs(r, keys, 0, {waiting}));
  REQUIRE(record_of(r, keys, f[0]).blocked_by == "ordering_key");
  CHECK(take(r, keys) == h);

  PushArgs merged = unique(Mode::replace, 2, -4, kNowMs + 3000);
  merged.ordering_key = "o";
  push_jobs(r, keys, 0, {merged});
  auto record = record_of(r, keys, f[0]);
  CHECK(record.state == JobState::queued);
  CHECK(record.blocked_by == "ordering_key");
  CHECK(record.priority == -4);
  CHECK_FALSE(exists(r, keys.scheduled(0)));
  CHECK(ready_queue(r, keys, 0, "email").empty());

  // Its turn comes before its new ready time: it waits for that.
  complete(r, keys, h[0]);
  CHECK(record_of(r, keys, f[0]).state == JobState::scheduled);
  CHECK(zscore(r, keys.scheduled(0), f[0]) == kNowMs + 3000);
  CHECK(argument_of(r, keys, f[0]) == 2);
}
