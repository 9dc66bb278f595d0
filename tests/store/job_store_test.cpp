// JobStore called directly against a real Redis: push, read, cancel, results.
#include <catch2/catch.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "src/store/job_store.hpp"
#include "tests/store/store_test_support.hpp"

using jq::store::JobId;
using jq::store::JobState;
using jq::store::JobStore;
using jq::store::Pushed;
using jq::store::ResultFetch;
using jq::store::StoreErrc;
using jq::store::StoreError;
using namespace jq::test;

namespace {

namespace asio = boost::asio;
using PushResult = jq::Expected<Pushed, StoreError>;

struct Fixture {
  explicit Fixture(int shard_run = 1) : jobs{h.client(), fresh_keys(), 4, clock.fn(), shard_run} {}
  StoreHarness h{shared_redis().port()};
  TestClock clock{kEpoch};
  JobStore jobs;

  // The stored record of the job whose id a push answered.
  jq::Expected<jq::store::JobRecord, StoreError> record(const std::string& id) {
    return h.run(jobs.get(*jq::store::parse_job_id(id, 4)));
  }

  JobId push(jq::api::NewJob job) {
    auto ids = h.run(jobs.push({std::move(job)}, ""));
    REQUIRE(ids);
    REQUIRE(ids->ids.size() == 1);
    return *jq::store::parse_job_id(ids->ids.front(), 4);
  }
};

// Every request pushed at once, each from its own coroutine (as from its own connection); their
// results in the order given. `traceparents`: one per request, or none for none.
std::vector<PushResult> push_together(Fixture& f, std::vector<std::vector<jq::api::NewJob>> all,
                                      std::vector<std::string> traceparents = {}) {
  traceparents.resize(all.size());
  std::vector<std::optional<PushResult>> results(all.size());
  f.h.run([&]() -> asio::awaitable<void> {
    auto executor = co_await asio::this_coro::executor;
    asio::steady_timer all_done(executor, asio::steady_timer::time_point::max());
    std::size_t left = all.size();
    for (std::size_t i = 0; i < all.size(); ++i) {
      asio::co_spawn(executor, f.jobs.push(std::move(all[i]), traceparents[i]),
                     [&, i](std::exception_ptr, PushResult r) {
                       results[i].emplace(std::move(r));
                       if (--left == 0) all_done.cancel();
                     });
    }
    boost::system::error_code ec;
    co_await all_done.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }());
  std::vector<PushResult> out;
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

std::int64_t script_calls() {
  SyncRedis redis(shared_redis().port());
  const std::string stats = redis.call({"INFO", "commandstats"}).str;
  const std::string_view tag = "cmdstat_fcall:calls=";
  const auto at = stats.find(tag);
  if (at == std::string::npos) return 0;
  return std::stoll(stats.substr(at + tag.size()));
}

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

TEST_CASE(
    "JobStore: pushes that arrive in the same moment are stored in one call, each answered with "
    "its own ids",
    "[redis]") {
  Fixture f(100);  // one shard for all of them
  std::vector<std::vector<jq::api::NewJob>> requests;
  for (int i = 0; i < 20; ++i) requests.push_back({new_job("mail", i)});
  requests.push_back({new_job("batch-a"), new_job("batch-b")});
  const std::int64_t calls_before = script_calls();
  auto results = push_together(f, requests);
  // The first does not go alone: its call is posted, behind the other 20 (CallBatcher).
  CHECK(script_calls() - calls_before == 1);
  std::set<std::string> ids;
  for (std::size_t i = 0; i < results.size(); ++i) {
    REQUIRE(results[i]);
    REQUIRE(results[i]->ids.size() == requests[i].size());
    CHECK(results[i]->duplicates.empty());
    for (std::size_t j = 0; j < requests[i].size(); ++j) {
      const std::string& id = results[i]->ids[j];
      ids.insert(id);
      auto record = f.record(id);
      REQUIRE(record);
      CHECK(record->name == requests[i][j].name);
      CHECK(record->priority == requests[i][j].priority);
    }
  }
  CHECK(ids.size() == 22);
}

TEST_CASE(
    "JobStore: a call carries at most 256 jobs; the requests beyond wait for it and go in the "
    "next",
    "[redis]") {
  Fixture f(1000);  // one shard for all of them
  std::vector<std::vector<jq::api::NewJob>> requests;
  for (int i = 0; i < 300; ++i) requests.push_back({new_job("mail", i)});
  const std::int64_t calls_before = script_calls();
  auto results = push_together(f, requests);
  CHECK(script_calls() - calls_before == 2);
  std::set<std::string> ids;
  for (auto& r : results) {
    REQUIRE(r);
    REQUIRE(r->ids.size() == 1);
    ids.insert(r->ids[0]);
  }
  CHECK(ids.size() == 300);
}

TEST_CASE(
    "JobStore: a push of another traceparent waits for the call before it, and each job keeps "
    "its own",
    "[redis]") {
  Fixture f(100);  // one shard for all of them
  const std::string trace = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  const std::int64_t calls_before = script_calls();
  auto results = push_together(f, {{new_job("a")}, {new_job("b")}, {new_job("c")}, {new_job("d")}},
                               {"", "", trace, ""});
  // One traceparent per call: a and b together, then c, then d, which waited for c's call.
  CHECK(script_calls() - calls_before == 3);
  const std::vector<std::string> expected{"", "", trace, ""};
  for (std::size_t i = 0; i < results.size(); ++i) {
    REQUIRE(results[i]);
    REQUIRE(results[i]->ids.size() == 1);
    auto record = f.record(results[i]->ids[0]);
    REQUIRE(record);
    CHECK(record->traceparent == expected[i]);
  }
}

TEST_CASE(
    "JobStore: a unique key pushed by two requests stored together is a duplicate for the "
    "second only",
    "[redis]") {
  Fixture f;
  // Jobs of one unique key go to one shard (job_routing), whatever their name.
  auto unique = [](std::string name) {
    auto job = new_job(std::move(name));
    job.unique_key = "order-7";
    return job;
  };
  // The three requests go together in one call, in the order they were made.
  auto results =
      push_together(f, {{unique("other")}, {unique("resize"), unique("mail")}, {unique("mail")}});
  REQUIRE(results[1]);
  REQUIRE(results[2]);
  CHECK(results[1]->duplicates.empty());
  CHECK(results[2]->duplicates == std::vector<std::size_t>{0});
  CHECK(results[2]->ids == std::vector<std::string>{results[1]->ids[1]});
}
