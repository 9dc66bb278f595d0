// JobStore called directly against a real Redis: push, read, cancel, results.
#include <catch2/catch.hpp>

#include "src/store/job_store.hpp"
#include "tests/store/store_test_support.hpp"

using jq::store::JobId;
using jq::store::JobState;
using jq::store::JobStore;
using jq::store::ResultFetch;
using jq::store::StoreErrc;
using namespace jq::test;

namespace {

struct Fixture {
  StoreHarness h{shared_redis().port()};
  TestClock clock{kEpoch};
  JobStore jobs{h.client(), fresh_keys(), 4, clock.fn()};

  JobId push(jq::api::NewJob job) {
    auto ids = h.run(jobs.push({std::move(job)}, ""));
    REQUIRE(ids);
    REQUIRE(ids->ids.size() == 1);
    return *jq::store::parse_job_id(ids->ids.front(), 4);
  }
};

}  // namespace

TEST_CASE("JobStore: a pushed job reads back queued with its fields", "[redis]") {
  Fixture f;
  auto job = new_job("mail", -5);
  job.keep_result = true;
  job.max_retry = 7;
  const JobId id = f.push(job);
  auto record = f.h.run(f.jobs.get(id));
  REQUIRE(record);
  CHECK(record->name == "mail");
  CHECK(record->priority == -5);
  CHECK(record->max_retry == 7);
  CHECK(record->keep_result);
  CHECK(record->state == JobState::queued);
  CHECK(record->attempts == 0);
  CHECK(record->enqueued_at_ms == 1767225600000);
}

TEST_CASE("JobStore: a batch is stored in one shard, consecutive pushes spread", "[redis]") {
  Fixture f;
  auto ids = f.h.run(f.jobs.push({new_job("a"), new_job("b"), new_job("c")}, ""));
  REQUIRE(ids);
  REQUIRE(ids->ids.size() == 3);
  const int shard = jq::store::parse_job_id(ids->ids[0], 4)->shard;
  for (const auto& id : ids->ids) CHECK(jq::store::parse_job_id(id, 4)->shard == shard);
  CHECK(f.push(new_job("d")).shard != shard);  // shard_run 1: the next push moves on
}

TEST_CASE("JobStore: cancel removes a queued job once, unknown ids are not found", "[redis]") {
  Fixture f;
  const JobId id = f.push(new_job("mail"));
  CHECK(f.h.run(f.jobs.cancel(id)));
  auto again = f.h.run(f.jobs.cancel(id));
  REQUIRE_FALSE(again);
  CHECK(again.error().code == StoreErrc::not_found);
  auto read = f.h.run(f.jobs.get(id));
  REQUIRE_FALSE(read);
  CHECK(read.error().code == StoreErrc::not_found);
}

TEST_CASE("JobStore: a result is pending while queued, nothing without keep_result", "[redis]") {
  Fixture f;
  auto kept = new_job("mail");
  kept.keep_result = true;
  auto pending = f.h.run(f.jobs.fetch_result(f.push(kept)));
  REQUIRE(pending);
  CHECK(pending->kind == ResultFetch::Kind::pending);
  CHECK(pending->state == JobState::queued);
  CHECK(pending->keep_result);
  auto unknown = f.h.run(f.jobs.fetch_result(JobId{1, "000000zzz"}));
  REQUIRE(unknown);
  CHECK(unknown->kind == ResultFetch::Kind::none);
}
