// Constraints through the stores, as the engine calls them: DispatchStore::reserve admits or
// holds, the end of an attempt gives its leases back and hands the slot on (Handoff), a
// constraint's removal wakes what it held before it is answered. Each case runs both ways the
// steps under {c} go: joined into the shard's scripts (one Redis) and separate (Admission,
// LeaseReleaser: a cluster).
#include <catch2/catch.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "api/constraint.hpp"
#include "src/store/constraint_set.hpp"
#include "src/store/constraint_store.hpp"
#include "src/store/dispatch_store.hpp"
#include "src/store/job_store.hpp"
#include "tests/store/store_test_support.hpp"

using jq::store::ConstraintCache;
using jq::store::ConstraintSteps;
using jq::store::ConstraintStore;
using jq::store::DispatchStore;
using jq::store::JobId;
using jq::store::JobRecord;
using jq::store::JobStore;
using jq::store::QueueRef;
using jq::store::RetryPolicy;
using namespace jq::test;
using namespace std::chrono_literals;

namespace {

constexpr int kShards = 2;

struct Fixture {
  explicit Fixture(ConstraintSteps steps)
      : store{h.client(),
              keys,
              kShards,
              clock.fn(),
              RetryPolicy{1000ms, 60'000ms, 0.0, std::chrono::seconds(60)},
              steps} {
    jobs.use_constraints(&cache);
  }

  StoreHarness h{shared_redis().port()};
  TestClock clock{kEpoch};
  jq::redis::Keys keys = fresh_keys();
  JobStore jobs{h.client(), keys, kShards, clock.fn(), 1};  // round robin over the shards
  DispatchStore store;
  ConstraintStore constraints{h.client(), keys, kShards, clock.fn()};
  ConstraintCache cache{h.client().executor(), constraints};

  void create(const std::string& json) {
    auto c = jq::api::decode_constraint(json, jq::api::MediaType::json);
    REQUIRE(c);
    REQUIRE(h.run(constraints.create(*c)));
    h.run(cache.reload());
  }

  JobId push() {
    jq::api::NewJob job = new_job("mail");
    auto ids = h.run(jobs.push({std::move(job)}, ""));
    REQUIRE(ids);
    return *jq::store::parse_job_id(ids->ids.front(), kShards);
  }

  JobRecord record(const JobId& id) {
    auto r = h.run(jobs.get(id));
    REQUIRE(r);
    return *r;
  }

  // Every job the shards let start now, shard 0 then shard 1.
  std::vector<jq::store::ReservedJob> reserve_all() {
    std::vector<jq::store::ReservedJob> out;
    for (int shard = 0; shard < kShards; ++shard) {
      auto r = h.run(store.reserve(QueueRef{shard, "mail"}, 10, std::nullopt));
      REQUIRE(r);
      for (auto& job : r->jobs) out.push_back(std::move(job));
    }
    return out;
  }

  // Runs the io_context (hand-offs go on in the background) until `done()` holds, 5 s at most.
  bool run_until(const std::function<bool()>& done) {
    for (auto waited = 0ms; waited < 5s; waited += 5ms) {
      if (done()) return true;
      h.run([this]() -> boost::asio::awaitable<void> {
        boost::asio::steady_timer timer(h.client().executor(), 5ms);
        co_await timer.async_wait(boost::asio::use_awaitable);
      }());
    }
    return done();
  }
};

}  // namespace

TEST_CASE(
    "DispatchStore: a reservation hands out only the jobs their constraint lets start, the "
    "others wait held with their attempt given back, and an answer hands the slot on",
    "[redis]") {
  const auto steps = GENERATE(ConstraintSteps::joined, ConstraintSteps::separate);
  // A one-node cluster (JQ_TEST_REDIS_CLUSTER) refuses scripts whose keys span hash tags.
  if (steps == ConstraintSteps::joined && redis_cluster_mode()) return;
  INFO((steps == ConstraintSteps::joined ? "joined" : "separate") << " steps under {c}");
  Fixture f{steps};
  f.create(R"({"name":"one","match":{"name":"mail"},"concurrency":1})");
  const JobId first = f.push();   // shard 0
  const JobId second = f.push();  // shard 1
  const JobId third = f.push();   // shard 0

  auto started = f.reserve_all();
  REQUIRE(started.size() == 1);
  CHECK(started[0].id.field == first.field);
  for (const JobId& held : {second, third}) {
    const JobRecord r = f.record(held);
    CHECK(r.state == jq::store::JobState::queued);
    CHECK(r.attempts == 0);
    CHECK(r.blocked_by == "one");
  }

  // The answer gives the lease back beside completeJobs; the oldest held job (second, in the
  // other shard) is woken and starts next, the third after it.
  const std::string success = "\x81\xa4type\xa7success";
  REQUIRE(*f.h.run(f.store.complete(first, 1, success, std::nullopt,
                                    started[0].record->constraints)) == jq::store::Completed::done);
  REQUIRE(f.run_until([&] { return f.record(second).blocked_by.empty(); }));
  auto next = f.reserve_all();
  REQUIRE(next.size() == 1);
  CHECK(next[0].id.field == second.field);
  CHECK(next[0].record->attempts == 1);
  CHECK(f.record(third).blocked_by == "one");

  // A failure gives its lease back too.
  REQUIRE(f.h.run(f.store.fail(second, 1, "\x81\xa4type\xa7\x66\x61ilure", false, "no",
                               next[0].record->constraints)));
  REQUIRE(f.run_until([&] { return f.record(third).blocked_by.empty(); }));
  auto last = f.reserve_all();
  REQUIRE(last.size() == 1);
  CHECK(last[0].id.field == third.field);
}

TEST_CASE(
    "DispatchStore: a job given back releases its lease before it is ready again, so it can "
    "start at once",
    "[redis]") {
  const auto steps = GENERATE(ConstraintSteps::joined, ConstraintSteps::separate);
  // A one-node cluster (JQ_TEST_REDIS_CLUSTER) refuses scripts whose keys span hash tags.
  if (steps == ConstraintSteps::joined && redis_cluster_mode()) return;
  INFO((steps == ConstraintSteps::joined ? "joined" : "separate") << " steps under {c}");
  Fixture f{steps};
  f.create(R"({"name":"one","match":{"name":"mail"},"concurrency":1})");
  const JobId id = f.push();
  auto started = f.reserve_all();
  REQUIRE(started.size() == 1);
  REQUIRE(started[0].id.field == id.field);
  auto released = f.h.run(f.store.release(started[0]));
  REQUIRE(released);
  CHECK(*released);
  auto again = f.reserve_all();
  REQUIRE(again.size() == 1);
  CHECK(again[0].id.field == id.field);
  CHECK(again[0].record->attempts == 1);
}

TEST_CASE("ConstraintStore: removing a constraint wakes every job it held before it answers",
          "[redis]") {
  const auto steps = GENERATE(ConstraintSteps::joined, ConstraintSteps::separate);
  // A one-node cluster (JQ_TEST_REDIS_CLUSTER) refuses scripts whose keys span hash tags.
  if (steps == ConstraintSteps::joined && redis_cluster_mode()) return;
  INFO((steps == ConstraintSteps::joined ? "joined" : "separate") << " steps under {c}");
  Fixture f{steps};
  f.create(R"({"name":"gate","match":{"name":"mail"},"paused":true})");
  const JobId a = f.push();
  const JobId b = f.push();
  CHECK(f.reserve_all().empty());
  REQUIRE(f.record(a).blocked_by == "gate");
  REQUIRE(f.h.run(f.constraints.remove("gate")));
  CHECK(f.record(a).blocked_by.empty());
  CHECK(f.record(b).blocked_by.empty());
  f.h.run(f.cache.reload());
  CHECK(f.reserve_all().size() == 2);
}

TEST_CASE("ConstraintStore: live state and totals sum the jobs held in every shard", "[redis]") {
  const auto steps = GENERATE(ConstraintSteps::joined, ConstraintSteps::separate);
  // A one-node cluster (JQ_TEST_REDIS_CLUSTER) refuses scripts whose keys span hash tags.
  if (steps == ConstraintSteps::joined && redis_cluster_mode()) return;
  INFO((steps == ConstraintSteps::joined ? "joined" : "separate") << " steps under {c}");
  Fixture f{steps};
  f.create(R"({"name":"one","match":{"name":"mail"},"concurrency":1})");
  for (int i = 0; i < 5; ++i) f.push();
  REQUIRE(f.reserve_all().size() == 1);
  auto state = f.h.run(f.constraints.live_state(*f.cache.current()->find("one")));
  REQUIRE(state);
  CHECK(state->waiting == 4);
  CHECK(state->running == 1);
  CHECK(state->keys == 1);
  auto totals = f.h.run(f.constraints.totals());
  REQUIRE(totals);
  REQUIRE(totals->size() == 1);
  CHECK((*totals)[0].waiting == 4);
  CHECK((*totals)[0].running == 1);
  CHECK((*totals)[0].started == 1);
  CHECK((*totals)[0].deferred == 4);
}
