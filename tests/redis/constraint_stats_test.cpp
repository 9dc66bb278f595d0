// constraintStats-4: every constraint's definition with its running jobs over all its keys and
// its start counter, read for /metrics. Changes nothing. (The jobs held and the holds are
// counted in the shards: constraint_dispatch_test.cpp, ConstraintStore::totals.)
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "api/constraint.hpp"
#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::bindings::ConstraintStats;

namespace {

std::string definition(const std::string& json) {
  auto c = jq::api::decode_constraint(json, jq::api::MediaType::json);
  REQUIRE(c);
  return jq::api::encode_constraint(*c);
}

void define(SyncRedis& r, const jq::redis::Keys& keys, const std::string& name,
            const std::string& limits = "") {
  const std::string json = R"({"name":")" + name + R"(","match":{"name":"*"})" + limits + "}";
  r.call({"HSET", keys.constraints(), name, definition(json)});
}

std::vector<ConstraintStats::Constraint> stats(SyncRedis& r, const jq::redis::Keys& keys,
                                               std::int64_t now_ms = kNowMs) {
  auto out =
      ConstraintStats::decode(r.eval(ConstraintStats::call(ConstraintStats::keys(keys), {now_ms})));
  REQUIRE(out);
  return *out;
}

}  // namespace

TEST_CASE("constraintStats of a store without constraints is empty", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  // State left by a constraint that was removed is not listed.
  r.call({"HSET", keys.constraint_counters(), "started:gone", "9"});
  CHECK(stats(r, keys).empty());
}

TEST_CASE("constraintStats lists every constraint by name with its definition as stored",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "sms", R"(,"concurrency":3)");
  define(r, keys, "mail", R"(,"rate":{"limit":10,"period":60})");
  auto s = stats(r, keys);
  REQUIRE(s.size() == 2);
  CHECK(s[0].name == "mail");
  CHECK(s[0].definition == r.call({"HGET", keys.constraints(), "mail"}).str);
  CHECK(s[1].name == "sms");
  CHECK(s[1].definition == r.call({"HGET", keys.constraints(), "sms"}).str);
  for (const auto& c : s) {  // nothing was kept for either yet
    CHECK(c.running == 0);
    CHECK(c.started == 0);
  }
}

TEST_CASE("constraintStats sums live leases over a constraint's keys and reads its start counter",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "mail", R"(,"key":"/tenant","concurrency":2)");
  define(r, keys, "mail:eu");  // a name that extends the other's is counted on its own
  r.call({"SADD", keys.constraint_lease_keys("mail"), "acme", "b:c#d", "stale"});
  const std::string live = std::to_string(kNowMs + 1000);
  const std::string expired = std::to_string(kNowMs - 1);
  r.call({"ZADD", keys.constraint_lease("mail", "acme"), live, "l1", live, "l2", expired, "l3"});
  r.call({"ZADD", keys.constraint_lease("mail", "b:c#d"), live, "l4"});
  r.call({"ZADD", keys.constraint_lease("mail", "stale"), expired, "l5"});
  r.call({"HSET", keys.constraint_counters(), "started:mail", "40", "started:mail:eu", "1"});
  r.call({"SADD", keys.constraint_lease_keys("mail:eu"), "x"});
  r.call({"ZADD", keys.constraint_lease("mail:eu", "x"), live, "l6"});

  auto s = stats(r, keys);
  REQUIRE(s.size() == 2);
  CHECK(s[0].name == "mail");
  CHECK(s[0].running == 3);  // acme 2 (l3 expired), b:c#d 1, stale 0
  CHECK(s[0].started == 40);
  CHECK(s[1].name == "mail:eu");
  CHECK(s[1].running == 1);
  CHECK(s[1].started == 1);
  // Leases stop counting at their expiry, with nothing written.
  CHECK(stats(r, keys, kNowMs + 1001)[0].running == 0);
}

TEST_CASE(
    "constraintStats reads what admitJobs keeps: one started, and the shard counts the one held "
    "at concurrency 1",
    "[redis]") {
  using jq::redis::bindings::AdmitJobs;
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  define(r, keys, "one", R"(,"concurrency":1)");
  PushArgs job;
  const std::vector<std::uint8_t> matched =
      nlohmann::json::to_msgpack(nlohmann::json::array({"one", ""}));
  job.constraints.assign(matched.begin(), matched.end());  // matched "one", key ""
  push_jobs(r, keys, 0, {job});
  REQUIRE(reserve_jobs(r, keys, 0, "email", 10).elements.size() == 2);  // a candidate
  AdmitJobs::Args args{kNowMs,
                       {{0, "0-a:1", base62(kStampUs, 9), kNowMs + 30000, job.constraints}}};
  REQUIRE(AdmitJobs::decode(r.eval(AdmitJobs::call(AdmitJobs::keys(keys), std::move(args))), 1));
  const std::string before = dump(r, keys.constraint_counters());

  auto s = stats(r, keys);
  REQUIRE(s.size() == 1);
  CHECK(s[0].running == 1);
  CHECK(s[0].started == 1);
  CHECK(dump(r, keys.constraint_counters()) == before);  // read only
}
