// Constraints at dispatch: reserveJobs-8 admits or holds, the scripts that end attempts release
// leases and wake held jobs, wakeConstraints-2 wakes rate-held keys and changed constraints
// (contract: "Constraints").
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
using jq::redis::bindings::CancelJob;
using jq::redis::bindings::CompleteJobs;
using jq::redis::bindings::WakeConstraints;
using jq::store::JobState;
using nlohmann::json;

namespace {

std::string packed(const json& value) {
  const std::vector<std::uint8_t> bytes = json::to_msgpack(value);
  return std::string(bytes.begin(), bytes.end());
}

// A definition as the API stores it (api::encode_constraint): only what the scripts read.
void define(SyncRedis& r, const jq::redis::Keys& keys, const std::string& name, json limits) {
  limits["name"] = name;
  if (!limits.contains("paused")) limits["paused"] = false;
  r.call({"HSET", keys.constraints(), name, packed(limits)});
}

PushArgs constrained(const std::string& name, const std::string& key) {
  PushArgs job;
  job.constraints = packed(json::array({name, key}));
  return job;
}

std::vector<std::string> take(SyncRedis& r, const jq::redis::Keys& keys, int max = 10,
                              std::int64_t now_ms = kNowMs) {
  Reply taken = reserve_jobs(r, keys, 0, "email", max, now_ms);
  std::vector<std::string> fields;
  for (std::size_t i = 0; i < taken.elements.size(); i += 2) {
    fields.push_back(taken.elements[i].str);
  }
  return fields;
}

void complete(SyncRedis& r, const jq::redis::Keys& keys, const std::string& field) {
  CompleteJobs::Args args{3600, keys.events_channel(0), 0, kNowMs, {{field, 1, "\xc0"}}};
  auto status = CompleteJobs::decode(
      r.eval(CompleteJobs::call(CompleteJobs::keys(keys, 0), std::move(args))), 1);
  REQUIRE(status);
  REQUIRE(status->front() == CompleteJobs::Status::done);
}

WakeConstraints::Woken wake(SyncRedis& r, const jq::redis::Keys& keys, const std::string& what,
                            std::int64_t now_ms = kNowMs) {
  auto woken = WakeConstraints::decode(
      r.eval(WakeConstraints::call(WakeConstraints::keys(keys), {now_ms, what, 1000})));
  REQUIRE(woken);
  return *woken;
}

std::string state_key(const jq::redis::Keys& keys, const std::string& kind, const std::string& name,
                      const std::string& key) {
  return keys.constraint_state_prefix() + kind + ":" + name + "#" + key;
}

std::vector<std::string> zmembers(SyncRedis& r, const std::string& key) {
  std::vector<std::string> out;
  for (const Reply& e : r.call({"ZRANGE", key, "0", "-1"}).elements) out.push_back(e.str);
  return out;
}

std::string id(const std::string& field) {
  return "0-" + field;
}

}  // namespace

TEST_CASE(
    "concurrency: a key runs at most its limit, the rest wait held while other jobs run, "
    "and a finished attempt lets the oldest held one go",
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
  CHECK(zmembers(r, state_key(keys, "held", "per-tenant", "A")) ==
        std::vector<std::string>{id(f[2])});
  CHECK(hgetall(r, keys.constraint_waiting("per-tenant")) ==
        std::map<std::string, std::string>{{"A", "1"}});
  CHECK(zscore(r, state_key(keys, "lease", "per-tenant", "A"), id(f[0])) == kNowMs + 30000);
  CHECK(hgetall(r, keys.counts(0)) ==
        std::map<std::string, std::string>{{"ready:email", "1"}, {"running:email", "4"}});

  complete(r, keys, f[0]);
  CHECK(zmembers(r, state_key(keys, "lease", "per-tenant", "A")) ==
        std::vector<std::string>{id(f[1])});
  CHECK_FALSE(exists(r, state_key(keys, "held", "per-tenant", "A")));
  CHECK(hgetall(r, keys.constraint_waiting("per-tenant")).empty());
  CHECK(read_record(r, keys, 0, f[2])->blocked_by.empty());
  const auto messages = events.take(r);
  REQUIRE(messages.size() == 1);
  CHECK(messages[0] == "p email 0 0 " + base62(kStampUs, 9) + f[2]);  // announced, old stamp
  CHECK(take(r, keys) == std::vector<std::string>{f[2]});
}

TEST_CASE("a lease past its attempt's deadline no longer counts", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "one", {{"concurrency", 1}});
  auto f = fields_of(push_jobs(r, keys, 0, {constrained("one", "k"), constrained("one", "k")}));
  CHECK(take(r, keys) == std::vector<std::string>{f[0]});
  // The first attempt's master died: past its deadline the second may start, with no release.
  auto woken = wake(r, keys, "one", kNowMs + 30001);
  CHECK(woken.woken == 1);
  CHECK(take(r, keys, 10, kNowMs + 30001) == std::vector<std::string>{f[1]});
}

TEST_CASE("a new job of a key waits behind the key's held jobs even when a slot is free",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "one", {{"concurrency", 1}});
  auto f = fields_of(push_jobs(r, keys, 0, {constrained("one", "k"), constrained("one", "k")}));
  REQUIRE(take(r, keys) == std::vector<std::string>{f[0]});
  // The lease expired (its master died), and a younger job arrives before anything woke f[1].
  auto late = fields_of(push_jobs(r, keys, 0, {constrained("one", "k")}, kNowMs, kStampUs + 5));
  CHECK(take(r, keys, 10, kNowMs + 30001).empty());
  CHECK(zmembers(r, state_key(keys, "held", "one", "k")) ==
        std::vector<std::string>{id(f[1]), id(late[0])});
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
  CHECK(zscore(r, keys.constraint_state_prefix() + "rate_due", "slow#k") == due);
  const auto messages = events.take(r);
  REQUIRE_FALSE(messages.empty());
  CHECK(messages.back() == "s " + std::to_string(due));

  CHECK(wake(r, keys, "", due - 1).woken == 0);  // not yet
  auto woken = wake(r, keys, "", due);
  CHECK(woken.woken == 1);
  CHECK(woken.next == -1);
  CHECK(take(r, keys, 10, due) == std::vector<std::string>{f[2]});
}

TEST_CASE("a paused constraint holds everything it matches until it is resumed", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "frozen", {{"paused", true}});
  auto f = fields_of(push_jobs(r, keys, 0, {constrained("frozen", "null"), {}}));
  CHECK(take(r, keys) == std::vector<std::string>{f[1]});
  CHECK(wake(r, keys, "frozen").woken == 0);

  define(r, keys, "frozen", {{"paused", false}});
  auto woken = wake(r, keys, "frozen");
  CHECK(woken.woken == 1);
  CHECK(woken.next == 0);
  CHECK(take(r, keys) == std::vector<std::string>{f[0]});
}

TEST_CASE("a removed constraint holds nothing: waking it frees all its held jobs", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "one", {{"concurrency", 1}});
  auto f = fields_of(push_jobs(
      r, keys, 0, {constrained("one", "k"), constrained("one", "k"), constrained("one", "k")}));
  REQUIRE(take(r, keys) == std::vector<std::string>{f[0]});
  r.call({"HDEL", keys.constraints(), "one"});
  CHECK(wake(r, keys, "one").woken == 2);
  CHECK(take(r, keys) == std::vector<std::string>{f[1], f[2]});
}

TEST_CASE("a cancelled held job leaves the held set and the waiting count", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "one", {{"concurrency", 1}});
  auto f = fields_of(push_jobs(r, keys, 0, {constrained("one", "k"), constrained("one", "k")}));
  REQUIRE(take(r, keys) == std::vector<std::string>{f[0]});
  auto status = CancelJob::decode(r.eval(
      CancelJob::call(CancelJob::keys(keys, 0, f[1]), {f[1], kNowMs, keys.events_channel(0), 0})));
  REQUIRE(status);
  CHECK(*status == CancelJob::Status::cancelled);
  CHECK_FALSE(exists(r, state_key(keys, "held", "one", "k")));
  CHECK(hgetall(r, keys.constraint_waiting("one")).empty());
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
  CHECK(zmembers(r, state_key(keys, "lease", "global", "")) == std::vector<std::string>{id(f[0])});
  CHECK(zmembers(r, state_key(keys, "lease", "tenant", "A")) == std::vector<std::string>{id(f[0])});
  CHECK(read_record(r, keys, 0, f[1])->blocked_by == "tenant");
}

TEST_CASE("held jobs never block the jobs behind them", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "one", {{"concurrency", 1}});
  std::vector<PushArgs> jobs(200, constrained("one", "k"));
  jobs.push_back({});
  auto f = fields_of(push_jobs(r, keys, 0, jobs));
  CHECK(take(r, keys, 1) == std::vector<std::string>{f[0]});
  // One call: 199 held on the way, then the free job.
  CHECK(take(r, keys, 1) == std::vector<std::string>{f[200]});
  CHECK(hgetall(r, keys.constraint_waiting("one")) ==
        std::map<std::string, std::string>{{"k", "199"}});
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
  REQUIRE(take(r, keys, 1) == std::vector<std::string>{f[2]});  // f[1] held on the way
  auto as_read = [&](const std::string& field) { return *raw_record(r, keys, 0, field); };
  auto reclassify = [&](std::vector<ReclassifyJobs::Job> jobs) {
    auto n = ReclassifyJobs::decode(
        r.eval(ReclassifyJobs::call(ReclassifyJobs::keys(keys, 0), {kNowMs, 0, std::move(jobs)})));
    REQUIRE(n);
    return *n;
  };

  // A record that changed since it was read is left alone.
  CHECK(reclassify({{f[1], "stale bytes", ""}}) == 0);
  CHECK(read_record(r, keys, 0, f[1])->blocked_by == "one");

  // The held job no longer matches anything: it leaves the held set for the front of its queue.
  CHECK(reclassify({{f[1], as_read(f[1]), ""}}) == 1);
  CHECK(read_record(r, keys, 0, f[1])->constraints.empty());
  CHECK(read_record(r, keys, 0, f[1])->blocked_by.empty());
  CHECK_FALSE(exists(r, state_key(keys, "held", "one", "k")));
  CHECK(take(r, keys) == std::vector<std::string>{f[1]});

  // A running job is not reclassified.
  CHECK(reclassify({{f[0], as_read(f[0]), ""}}) == 0);
}
