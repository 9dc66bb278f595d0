// createConstraint-2, updateConstraint-3 and removeConstraint-3: each change of a definition
// moves the version on and announces "c <version>"; refusals change and announce nothing.
// constraintState-3: the live state read from the keys the dispatch side keeps under {c} and
// the waiting counts the master summed over the shards.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::bindings::ConstraintState;
using jq::redis::bindings::CreateConstraint;
using jq::redis::bindings::RemoveConstraint;
using jq::redis::bindings::UpdateConstraint;

namespace {

auto create(SyncRedis& r, const jq::redis::Keys& keys, const std::string& name,
            const std::string& definition) {
  auto out = CreateConstraint::decode(r.eval(CreateConstraint::call(
      CreateConstraint::keys(keys), {name, definition, keys.constraint_channel()})));
  REQUIRE(out);
  return *out;
}

auto update(SyncRedis& r, const jq::redis::Keys& keys, const std::string& name,
            const std::string& definition, const std::string& expected = "") {
  auto out = UpdateConstraint::decode(r.eval(
      UpdateConstraint::call(UpdateConstraint::keys(keys),
                             {name, definition, expected, keys.constraint_channel(), kNowMs})));
  REQUIRE(out);
  return *out;
}

auto remove(SyncRedis& r, const jq::redis::Keys& keys, const std::string& name) {
  auto out = RemoveConstraint::decode(r.eval(RemoveConstraint::call(
      RemoveConstraint::keys(keys), {name, keys.constraint_channel(), kNowMs})));
  REQUIRE(out);
  return *out;
}

std::string stored(SyncRedis& r, const jq::redis::Keys& keys, const std::string& name) {
  return r.call({"HGET", keys.constraints(), name}).str;
}

std::string version(SyncRedis& r, const jq::redis::Keys& keys) {
  return r.call({"GET", keys.constraints_version()}).str;
}

ConstraintState::State state(SyncRedis& r, const jq::redis::Keys& keys, const std::string& name,
                             std::int64_t now_ms, std::int64_t top = 20,
                             std::vector<ConstraintState::Waiting> waiting = {}) {
  auto out = ConstraintState::decode(r.eval(
      ConstraintState::call(ConstraintState::keys(keys, name), {now_ms, top, std::move(waiting)})));
  REQUIRE(out);
  return *out;
}

}  // namespace

TEST_CASE("createConstraint stores a new name, moves the version on and announces it", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);

  auto first = create(r, keys, "mail", "def-1");
  CHECK(first.status == CreateConstraint::Status::created);
  CHECK(first.version == 1);
  auto second = create(r, keys, "sms", "def-2");
  CHECK(second.version == 2);
  CHECK(stored(r, keys, "mail") == "def-1");
  CHECK(stored(r, keys, "sms") == "def-2");
  CHECK(version(r, keys) == "2");
  CHECK(events.take(r) == std::vector<std::string>{"c 1", "c 2"});
}

TEST_CASE("createConstraint refuses a name that is taken and changes nothing", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  create(r, keys, "mail", "def-1");
  EventListener events(shared_redis().port(), keys);

  auto again = create(r, keys, "mail", "def-2");
  CHECK(again.status == CreateConstraint::Status::exists);
  CHECK(again.version == 1);
  CHECK(stored(r, keys, "mail") == "def-1");
  CHECK(version(r, keys) == "1");
  CHECK(events.take(r).empty());
}

TEST_CASE("updateConstraint replaces a definition, moves the version on and announces it",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  create(r, keys, "mail", "def-1");
  EventListener events(shared_redis().port(), keys);

  auto replaced = update(r, keys, "mail", "def-2");
  CHECK(replaced.status == UpdateConstraint::Status::replaced);
  CHECK(replaced.version == 2);
  CHECK(stored(r, keys, "mail") == "def-2");
  CHECK(events.take(r) == std::vector<std::string>{"c 2"});
}

TEST_CASE("updateConstraint with the stored definition changes and announces nothing", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  create(r, keys, "mail", "def-1");
  EventListener events(shared_redis().port(), keys);

  auto same = update(r, keys, "mail", "def-1");
  CHECK(same.status == UpdateConstraint::Status::unchanged);
  CHECK(same.version == 1);
  CHECK(version(r, keys) == "1");
  CHECK(events.take(r).empty());
}

TEST_CASE("updateConstraint of an unknown name creates nothing", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);

  auto missing = update(r, keys, "mail", "def-1");
  CHECK(missing.status == UpdateConstraint::Status::not_found);
  CHECK(missing.version == 0);
  CHECK_FALSE(exists(r, keys.constraints()));
  CHECK_FALSE(exists(r, keys.constraints_version()));
  CHECK(events.take(r).empty());
}

TEST_CASE("updateConstraint writes only over the definition it was computed from", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  create(r, keys, "mail", "def-1");
  update(r, keys, "mail", "def-2");  // another master's change, after ours read def-1
  EventListener events(shared_redis().port(), keys);

  auto stale = update(r, keys, "mail", "def-3", "def-1");
  CHECK(stale.status == UpdateConstraint::Status::changed);
  CHECK(stale.version == 2);
  CHECK(stored(r, keys, "mail") == "def-2");
  CHECK(events.take(r).empty());

  auto fresh = update(r, keys, "mail", "def-3", "def-2");
  CHECK(fresh.status == UpdateConstraint::Status::replaced);
  CHECK(fresh.version == 3);
  CHECK(stored(r, keys, "mail") == "def-3");
  CHECK(events.take(r) == std::vector<std::string>{"c 3"});
}

TEST_CASE("removeConstraint deletes the definition, moves the version on and announces it",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  create(r, keys, "mail", "def-1");
  create(r, keys, "sms", "def-2");
  EventListener events(shared_redis().port(), keys);

  auto removed = remove(r, keys, "mail");
  CHECK(removed.status == RemoveConstraint::Status::removed);
  CHECK(removed.version == 3);
  CHECK_FALSE(r.call({"HEXISTS", keys.constraints(), "mail"}).integer);
  CHECK(stored(r, keys, "sms") == "def-2");
  CHECK(events.take(r) == std::vector<std::string>{"c 3"});
}

TEST_CASE("removeConstraint of an unknown name changes and announces nothing", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  create(r, keys, "mail", "def-1");
  EventListener events(shared_redis().port(), keys);

  auto missing = remove(r, keys, "sms");
  CHECK(missing.status == RemoveConstraint::Status::not_found);
  CHECK(missing.version == 1);
  CHECK(version(r, keys) == "1");
  CHECK(events.take(r).empty());
}

TEST_CASE("constraintState of a constraint nothing was kept for is all zeros", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto s = state(r, keys, "mail", kNowMs);
  CHECK(s.waiting == 0);
  CHECK(s.running == 0);
  CHECK(s.keys == 0);
  CHECK(s.top.empty());
}

TEST_CASE("constraintState sums waiting counts and live leases over the keys", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string name = "mail";
  r.call({"SADD", keys.constraint_lease_keys(name), "acme", "initech", "stale"});
  const std::string live = std::to_string(kNowMs + 1000);
  const std::string expired = std::to_string(kNowMs - 1);
  r.call({"ZADD", keys.constraint_lease(name, "acme"), live, "l1", live, "l2", expired, "l3"});
  r.call({"ZADD", keys.constraint_lease(name, "initech"), live, "l4"});
  r.call({"ZADD", keys.constraint_lease(name, "stale"), expired, "l5"});
  r.call({"SET", keys.constraint_tat(name, "acme"), std::to_string(kNowMs + 250)});
  // Another constraint's keys are not counted.
  r.call({"ZADD", keys.constraint_lease("other", "acme"), live, "x"});

  auto s = state(r, keys, name, kNowMs, 20, {{"acme", 5}, {"globex", 2}, {"idle", 0}});
  CHECK(s.waiting == 7);
  CHECK(s.running == 3);
  CHECK(s.keys == 3);  // acme, globex, initech: "idle" waits for nothing, "stale" runs nothing
  REQUIRE(s.top.size() == 3);
  CHECK(s.top[0].key == "acme");
  CHECK(s.top[0].waiting == 5);
  CHECK(s.top[0].running == 2);
  CHECK(s.top[0].tat_ms == kNowMs + 250);
  CHECK(s.top[1].key == "globex");
  CHECK(s.top[1].waiting == 2);
  CHECK(s.top[1].running == 0);
  CHECK_FALSE(s.top[1].tat_ms);
  CHECK(s.top[2].key == "initech");
  CHECK(s.top[2].waiting == 0);
  CHECK(s.top[2].running == 1);
}

TEST_CASE("constraintState lists at most `top` keys, most waiting first", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  std::vector<ConstraintState::Waiting> waiting;
  for (int i = 1; i <= 30; ++i) waiting.push_back({"k" + std::to_string(i), i});
  auto s = state(r, keys, "mail", kNowMs, 20, waiting);
  CHECK(s.keys == 30);
  CHECK(s.waiting == 30 * 31 / 2);
  REQUIRE(s.top.size() == 20);
  CHECK(s.top.front().key == "k30");
  CHECK(s.top.back().key == "k11");
  CHECK(state(r, keys, "mail", kNowMs, 0, waiting).top.empty());
}

TEST_CASE("constraintState counts a key with ':' and '#' in it under its own name", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string live = std::to_string(kNowMs + 1000);
  r.call({"SADD", keys.constraint_lease_keys("a"), "b:c#d"});
  r.call({"ZADD", keys.constraint_lease("a", "b:c#d"), live, "l1"});
  r.call({"ZADD", keys.constraint_lease("a:b", "c#d"), live, "l2"});
  auto s = state(r, keys, "a", kNowMs);
  CHECK(s.running == 1);
  REQUIRE(s.top.size() == 1);
  CHECK(s.top[0].key == "b:c#d");
}
