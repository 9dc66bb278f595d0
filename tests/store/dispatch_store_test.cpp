// DispatchStore called directly against a real Redis: heads, reservations bounded by another
// queue's head, success, failure with retry and death, release, promotion and reaping, on a
// clock the test moves.
#include <catch2/catch.hpp>

#include "src/store/dispatch_store.hpp"
#include "src/store/job_store.hpp"
#include "tests/store/store_test_support.hpp"

using jq::store::DispatchStore;
using jq::store::FailOutcome;
using jq::store::JobId;
using jq::store::JobState;
using jq::store::JobStore;
using jq::store::QueueRef;
using jq::store::ResultFetch;
using jq::store::RetryPolicy;
using namespace jq::test;
using namespace std::chrono_literals;

namespace {

constexpr int kShards = 2;
const std::string kFailure =
    "\x81\xa4type\xa7"
    "failure";  // {type: "failure"}

struct Fixture {
  StoreHarness h{shared_redis().port()};
  TestClock clock{kEpoch};
  jq::redis::Keys keys = fresh_keys();
  JobStore jobs{h.client(), keys, kShards, clock.fn(), 1000};  // every push in shard 0
  DispatchStore store{h.client(), keys, kShards, clock.fn(),
                      RetryPolicy{1000ms, 60'000ms, 0.0, std::chrono::seconds(60)}};

  JobId push(jq::api::NewJob job) {
    auto ids = h.run(jobs.push({std::move(job)}, ""));
    REQUIRE(ids);
    return *jq::store::parse_job_id(ids->ids.front(), kShards);
  }

  JobState state(const JobId& id) {
    auto record = h.run(jobs.get(id));
    REQUIRE(record);
    return record->state;
  }

  // Attempt `attempt` failed and may retry.
  jq::Expected<FailOutcome, jq::store::StoreError> fail(const JobId& id, int attempt) {
    return h.run(store.fail(id, attempt, kFailure, true, "boom", {}));
  }

  jq::store::ReservedJob reserve_one(const std::string& name) {
    auto r = h.run(store.reserve(QueueRef{0, name}, 1, std::nullopt));
    REQUIRE(r);
    REQUIRE(r->jobs.size() == 1);
    return std::move(r->jobs.front());
  }
};

}  // namespace

// What picks the joined steps under {c} (store::ConstraintSteps): the probe of each handshake.
TEST_CASE("a single Redis runs a script spanning hash tags, a cluster-enabled one refuses it",
          "[redis]") {
  StoreHarness h{shared_redis().port()};
  CHECK(h.client().scripts_span_tags() == !redis_cluster_mode());
}

// A production Redis often gives jqmaster a user limited to its own keys: the probe must pass
// there too, or every master on it would take the separate steps meant for a cluster.
TEST_CASE("a Redis user limited to jqmaster's keys still runs scripts spanning hash tags",
          "[redis]") {
  if (redis_cluster_mode()) return;  // a cluster refuses them whatever the user
  RedisServer redis;
  SyncRedis r(redis.port());
  REQUIRE(r.call({"ACL", "SETUSER", "jq", "on", ">secret", "~jq:*", "&*", "+@all"}).str == "OK");
  StoreHarness h{"redis://jq:secret@127.0.0.1:" + std::to_string(redis.port()) + "/0"};
  CHECK(h.client().scripts_span_tags());
}

TEST_CASE("DispatchStore: heads are the best job per queue, a reservation stops at the bound",
          "[redis]") {
  Fixture f;
  const JobId low = f.push(new_job("mail", 1));
  f.push(new_job("mail", 1));
  f.push(new_job("mail", 9));
  const JobId other = f.push(new_job("resize", 5));
  auto heads = f.h.run(f.store.heads({QueueRef{0, "mail"}, QueueRef{0, "resize"}, {1, "mail"}}));
  REQUIRE(heads.size() == 3);
  REQUIRE((heads[0] && heads[1] && heads[2]));
  REQUIRE(*heads[0]);
  CHECK((*heads[0])->priority == 1);
  CHECK((*heads[0])->member.ends_with(low.field));
  REQUIRE(*heads[1]);
  CHECK((*heads[1])->member.ends_with(other.field));
  CHECK_FALSE(*heads[2]);  // shard 1 has nothing

  // Bounded by resize's head (priority 5): the two priority-1 jobs, not the 9.
  auto r = f.h.run(f.store.reserve(QueueRef{0, "mail"}, 10, *heads[1]));
  REQUIRE(r);
  REQUIRE(r->jobs.size() == 2);
  CHECK(r->jobs[0].id.field == low.field);
  CHECK(r->jobs[0].record->attempts == 1);
  CHECK(r->jobs[0].deadline_ms == 1767225600000 + 30'000);
  REQUIRE(r->head);
  CHECK(r->head->priority == 9);  // what the queue's head is now
  CHECK(f.state(low) == JobState::running);
}

TEST_CASE("DispatchStore: a success is kept once for the pusher, a stale one is ignored",
          "[redis]") {
  Fixture f;
  auto kept = new_job("mail");
  kept.keep_result = true;
  const JobId id = f.push(kept);
  const auto job = f.reserve_one("mail");
  const std::string result = "\x82\xa4type\xa7success\xa6result\x2a";
  auto done = f.h.run(f.store.complete(id, 1, result, std::nullopt, {}));
  REQUIRE(done);
  CHECK(*done == jq::store::Completed::done);
  auto stale = f.h.run(f.store.complete(id, 1, result, std::nullopt, {}));
  REQUIRE(stale);
  CHECK(*stale == jq::store::Completed::stale);
  auto fetched = f.h.run(f.jobs.fetch_result(id));
  REQUIRE(fetched);
  CHECK(fetched->kind == ResultFetch::Kind::result);
  CHECK(fetched->result == result);
  CHECK(f.h.run(f.jobs.fetch_result(id))->kind == ResultFetch::Kind::none);
  (void)job;
}

TEST_CASE("DispatchStore: a failure is retried after its backoff, promoted when due, then dead",
          "[redis]") {
  Fixture f;
  auto job = new_job("mail");
  job.max_retry = 1;
  const JobId id = f.push(job);
  f.reserve_one("mail");
  auto first = f.fail(id, 1);
  REQUIRE(first);
  CHECK(*first == FailOutcome::retry_scheduled);
  CHECK(f.state(id) == JobState::scheduled);

  auto early = f.h.run(f.store.promote(0, 100));  // base 1 s, no jitter: due at +1 s
  REQUIRE(early);
  CHECK(early->promoted == 0);
  CHECK(early->next_due_ms == 1767225600000 + 1000);
  f.clock.advance(1000ms);
  auto due = f.h.run(f.store.promote(0, 100));
  REQUIRE(due);
  CHECK(due->promoted == 1);
  CHECK(f.state(id) == JobState::queued);

  const auto again = f.reserve_one("mail");
  CHECK(again.record->attempts == 2);
  auto last = f.fail(id, 2);
  REQUIRE(last);
  CHECK(*last == FailOutcome::dead);
}

TEST_CASE("DispatchStore: a released attempt does not count and runs next", "[redis]") {
  Fixture f;
  const JobId first = f.push(new_job("mail"));
  f.push(new_job("mail"));
  const auto taken = f.reserve_one("mail");
  REQUIRE(taken.id.field == first.field);
  auto released = f.h.run(f.store.release(taken));
  REQUIRE(released);
  CHECK(*released);
  const auto again = f.reserve_one("mail");
  CHECK(again.id.field == first.field);  // back at the front
  CHECK(again.record->attempts == 1);    // the released attempt was taken back
}

TEST_CASE("DispatchStore: reaping fails attempts past the cutoff as timeouts", "[redis]") {
  Fixture f;
  const JobId id = f.push(new_job("mail"));
  f.reserve_one("mail");  // deadline: +30 s
  const auto reaped_in_all = [&](std::int64_t cutoff_ms) {
    int reaped = 0;
    for (const auto& shard : f.h.run(f.store.reap_all(cutoff_ms, 100))) {
      REQUIRE(shard);
      reaped += *shard;
    }
    return reaped;
  };
  CHECK(reaped_in_all(1767225600000 + 29'999) == 0);
  CHECK(reaped_in_all(1767225600000 + 30'001) == 1);
  CHECK(f.state(id) == JobState::scheduled);  // a timeout may retry
}
