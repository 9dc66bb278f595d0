// ConstraintStore and ConstraintCache against a real Redis: definitions created, replaced,
// patched and removed as the API asks, the snapshot every master matches jobs against, and the
// live state read from the dispatch side's keys.
#include <catch2/catch.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "src/redis/bindings/constraint_writes.hpp"
#include "src/store/constraint_store.hpp"
#include "tests/store/store_test_support.hpp"

using jq::api::Constraint;
using jq::api::ConstraintPatch;
using jq::store::ConstraintCache;
using jq::store::ConstraintSet;
using jq::store::ConstraintStore;
using jq::store::StoreErrc;
using namespace jq::test;
using namespace std::chrono_literals;

namespace {

Constraint constraint(const std::string& json) {
  auto c = jq::api::decode_constraint(json, jq::api::MediaType::json);
  REQUIRE(c);
  return *c;
}

Constraint mail() {
  return constraint(
      R"({"name":"mail","match":{"name":"mail.*","argument":[{"path":"/kind","equals":"news"}]},)"
      R"("key":"/tenant","concurrency":5,"rate":{"limit":10,"period":60,"burst":2}})");
}

constexpr int kShards = 2;

struct Fixture {
  StoreHarness h{shared_redis().port()};
  TestClock clock{kEpoch};
  jq::redis::Keys keys = fresh_keys();
  ConstraintStore store{h.client(), keys, kShards, clock.fn()};
  SyncRedis r{shared_redis().port()};

  std::int64_t now_ms() const { return jq::epoch_ms(kEpoch); }
};

// Runs the io_context until `done()` holds (or `at_most` passes).
void run_until(StoreHarness& h, const std::function<bool()>& done,
               std::chrono::milliseconds at_most = 5s) {
  h.run([&]() -> boost::asio::awaitable<void> {
    boost::asio::steady_timer timer(h.client().executor());
    for (auto waited = 0ms; waited < at_most && !done(); waited += 10ms) {
      timer.expires_after(10ms);
      co_await timer.async_wait(boost::asio::use_awaitable);
    }
  }());
}

}  // namespace

TEST_CASE("ConstraintStore: a created constraint is read back as it was given", "[redis]") {
  Fixture f;
  auto created = f.h.run(f.store.create(mail()));
  REQUIRE(created);
  CHECK(*created == mail());
  auto got = f.h.run(f.store.get("mail"));
  REQUIRE(got);
  CHECK(*got == mail());
  auto all = f.h.run(f.store.list());
  REQUIRE(all);
  CHECK(*all == std::vector<Constraint>{mail()});
  CHECK(*f.h.run(f.store.version()) == 1);
}

TEST_CASE("ConstraintStore: a taken name is a conflict, an unknown one not found", "[redis]") {
  Fixture f;
  REQUIRE(f.h.run(f.store.create(mail())));
  auto again = f.h.run(f.store.create(mail()));
  REQUIRE_FALSE(again);
  CHECK(again.error().code == StoreErrc::conflict);
  CHECK_THAT(again.error().message, Catch::Contains("PUT /v1/constraints/mail"));

  Constraint other = mail();
  other.name = "other";
  for (auto code :
       {f.h.run(f.store.get("other")).error().code, f.h.run(f.store.replace(other)).error().code,
        f.h.run(f.store.patch("other", ConstraintPatch{})).error().code,
        f.h.run(f.store.remove("other")).error().code}) {
    CHECK(code == StoreErrc::not_found);
  }
}

TEST_CASE("ConstraintStore: replace and patch change the definition, remove forgets it",
          "[redis]") {
  Fixture f;
  REQUIRE(f.h.run(f.store.create(mail())));
  Constraint replacement = constraint(R"({"name":"mail","match":{"name":"*"},"paused":true})");
  REQUIRE(f.h.run(f.store.replace(replacement)));
  CHECK(*f.h.run(f.store.get("mail")) == replacement);

  ConstraintPatch patch;
  patch.concurrency = std::optional<int>(3);
  patch.paused = false;
  auto patched = f.h.run(f.store.patch("mail", patch));
  REQUIRE(patched);
  CHECK(patched->concurrency == 3);
  CHECK_FALSE(patched->paused);
  CHECK(patched->match == replacement.match);
  CHECK(*f.h.run(f.store.get("mail")) == *patched);
  CHECK(*f.h.run(f.store.version()) == 3);

  // A patch that changes nothing writes nothing.
  REQUIRE(f.h.run(f.store.patch("mail", patch)));
  CHECK(*f.h.run(f.store.version()) == 3);

  REQUIRE(f.h.run(f.store.remove("mail")));
  CHECK(f.h.run(f.store.get("mail")).error().code == StoreErrc::not_found);
  CHECK(f.h.run(f.store.list())->empty());
}

TEST_CASE("ConstraintStore: a patch merges into what another change stored meanwhile", "[redis]") {
  Fixture f;
  REQUIRE(f.h.run(f.store.create(mail())));
  // The compare-and-set refuses a write made from an older definition...
  using jq::redis::bindings::UpdateConstraint;
  Constraint stale = mail();
  stale.paused = true;
  auto refused = UpdateConstraint::decode(f.r.eval(
      UpdateConstraint::call(UpdateConstraint::keys(f.keys),
                             {"mail", jq::api::encode_constraint(stale), "not what is stored",
                              f.keys.constraint_channel(), f.now_ms()})));
  REQUIRE(refused);
  CHECK(refused->status == UpdateConstraint::Status::changed);
  // ...and a patch reads the current definition, so another change's fields survive it.
  Constraint elsewhere = mail();
  elsewhere.concurrency = 9;
  REQUIRE(f.h.run(f.store.replace(elsewhere)));
  ConstraintPatch patch;
  patch.paused = true;
  auto patched = f.h.run(f.store.patch("mail", patch));
  REQUIRE(patched);
  CHECK(patched->concurrency == 9);
  CHECK(patched->paused);
}

TEST_CASE("ConstraintStore: apply creates a constraint or replaces the one of its name",
          "[redis]") {
  Fixture f;
  REQUIRE(f.h.run(f.store.apply(mail())));
  CHECK(*f.h.run(f.store.get("mail")) == mail());
  Constraint changed = mail();
  changed.concurrency.reset();
  REQUIRE(f.h.run(f.store.apply(changed)));
  CHECK(*f.h.run(f.store.get("mail")) == changed);
  REQUIRE(f.h.run(f.store.apply(changed)));  // the same again: nothing written
  CHECK(*f.h.run(f.store.version()) == 2);
}

TEST_CASE("ConstraintStore: a definition that does not decode is left out of the load", "[redis]") {
  Fixture f;
  REQUIRE(f.h.run(f.store.create(mail())));
  f.r.call({"HSET", f.keys.constraints(), "broken", "\xc1"});
  f.r.call({"HSET", f.keys.constraints(), "renamed", jq::api::encode_constraint(mail())});
  auto set = f.h.run(f.store.load());
  REQUIRE(set);
  REQUIRE(set->constraints().size() == 1);
  CHECK(set->constraints().front().name == "mail");
  CHECK(f.h.run(f.store.get("broken")).error().code == StoreErrc::internal);
}

TEST_CASE("ConstraintSet: sorted by name, found by name, matching in name order", "[unit]") {
  const ConstraintSet set(7, {constraint(R"({"name":"z","match":{"name":"*"}})"),
                              constraint(R"({"name":"a","match":{"name":"mail.*"},"key":"/t"})")});
  CHECK(set.version() == 7);
  REQUIRE(set.constraints().size() == 2);
  CHECK(set.constraints()[0].name == "a");
  REQUIRE(set.find("z"));
  CHECK(set.find("z")->name == "z");
  CHECK_FALSE(set.find("m"));
  const std::string argument =
      "\x81\xa1t\xa4"
      "acme";  // {"t": "acme"}
  CHECK(set.match("mail.send", argument) ==
        std::vector<jq::api::MatchedConstraint>{{"a", "acme"}, {"z", ""}});
  CHECK(set.match("sms", argument) == std::vector<jq::api::MatchedConstraint>{{"z", ""}});
  CHECK(ConstraintSet().match("sms", argument).empty());
}

TEST_CASE("ConstraintCache: loads at start and reloads after a change", "[redis]") {
  Fixture f;
  REQUIRE(f.h.run(f.store.create(mail())));
  ConstraintCache cache(f.h.client().executor(), f.store);
  CHECK_FALSE(cache.loaded());
  CHECK(cache.current()->constraints().empty());
  cache.start();
  run_until(f.h, [&] { return cache.loaded(); });
  REQUIRE(cache.loaded());
  CHECK(cache.current()->version() == 1);
  CHECK(cache.current()->match("mail.send", "\x81\xa4kind\xa4news").size() == 1);

  auto before = cache.current();
  REQUIRE(f.h.run(f.store.remove("mail")));
  cache.changed();
  run_until(f.h, [&] { return cache.current()->version() == 2; });
  CHECK(cache.current()->version() == 2);
  CHECK(cache.current()->constraints().empty());
  CHECK(before->constraints().size() == 1);  // a snapshot in use stays as it was

  // An event for a version already held changes nothing; a newer one reloads.
  REQUIRE(f.h.run(f.store.create(mail())));
  cache.on_event(jq::events::Event{jq::events::EventKind::constraints, "3"});
  run_until(f.h, [&] { return cache.current()->version() == 3; });
  CHECK(cache.current()->constraints().size() == 1);
  cache.stop();
  run_until(
      f.h, [] { return false; }, 50ms);  // let the loop see the stop and end
}

TEST_CASE(
    "ConstraintStore: live state sums the jobs held in every shard and the leases under {c} per "
    "key",
    "[redis]") {
  Fixture f;
  const std::string later = std::to_string(f.now_ms() + 60'000);
  f.r.call({"HSET", f.keys.held_waiting(0, "mail"), "acme", "3", "globex", "1"});
  f.r.call({"HSET", f.keys.held_waiting(1, "mail"), "acme", "1"});
  f.r.call({"HSET", f.keys.held_waiting(1, "other"), "acme", "9"});  // another constraint's
  f.r.call({"SADD", f.keys.constraint_lease_keys("mail"), "acme"});
  f.r.call({"ZADD", f.keys.constraint_lease("mail", "acme"), later, "lease-1"});
  // acme's rate: a start every 6 s with a burst of 2 allows a start 12 s before its tat.
  f.r.call({"SET", f.keys.constraint_tat("mail", "acme"), std::to_string(f.now_ms() + 20'000)});
  f.r.call({"SET", f.keys.constraint_tat("mail", "globex"), std::to_string(f.now_ms() + 5'000)});

  auto state = f.h.run(f.store.live_state(mail()));
  REQUIRE(state);
  CHECK(state->waiting == 5);
  CHECK(state->running == 1);
  CHECK(state->keys == 2);
  REQUIRE(state->top_keys.size() == 2);
  CHECK(state->top_keys[0].key == "acme");
  CHECK(state->top_keys[0].waiting == 4);
  CHECK(state->top_keys[0].running == 1);
  CHECK(state->top_keys[0].next_start_at_ms == f.now_ms() + 8'000);
  CHECK(state->top_keys[1].key == "globex");
  CHECK_FALSE(state->top_keys[1].next_start_at_ms);  // its tat less the burst is past

  auto nothing = f.h.run(f.store.live_state(constraint(R"({"name":"idle","match":{"name":"*"}})")));
  REQUIRE(nothing);
  CHECK(nothing->waiting == 0);
  CHECK(nothing->running == 0);
  CHECK(nothing->keys == 0);
  CHECK(nothing->top_keys.empty());
}

TEST_CASE(
    "ConstraintStore: totals give every constraint with its sums over the shards and its "
    "counters, by name",
    "[redis]") {
  Fixture f;
  REQUIRE(f.h.run(f.store.create(mail())));
  const Constraint idle = constraint(R"({"name":"idle","match":{"name":"*"},"paused":true})");
  REQUIRE(f.h.run(f.store.create(idle)));
  f.r.call({"HSET", f.keys.held_tallies(0), "waiting:mail", "4", "deferred:mail", "5",
            "waiting:mail:eu", "8"});
  f.r.call({"HSET", f.keys.held_tallies(1), "waiting:mail", "1", "deferred:mail", "2"});
  f.r.call({"SADD", f.keys.constraint_lease_keys("mail"), "acme"});
  f.r.call({"ZADD", f.keys.constraint_lease("mail", "acme"), std::to_string(f.now_ms() + 60'000),
            "lease-1"});
  f.r.call({"HSET", f.keys.constraint_counters(), "started:mail", "12"});
  f.r.call({"HSET", f.keys.constraints(), "broken", "\xc1"});  // logged and left out

  auto totals = f.h.run(f.store.totals());
  REQUIRE(totals);
  REQUIRE(totals->size() == 2);
  const auto& idle_totals = (*totals)[0];
  CHECK(idle_totals.constraint == idle);
  CHECK(idle_totals.waiting == 0);
  CHECK(idle_totals.running == 0);
  CHECK(idle_totals.started == 0);
  CHECK(idle_totals.deferred == 0);
  const auto& mail_totals = (*totals)[1];
  CHECK(mail_totals.constraint == mail());
  CHECK(mail_totals.waiting == 5);
  CHECK(mail_totals.running == 1);
  CHECK(mail_totals.started == 12);
  CHECK(mail_totals.deferred == 7);
}

TEST_CASE("the next start of a key comes from its tat less the rate's tolerance", "[unit]") {
  using jq::store::next_start_at_ms;
  const jq::api::RateLimit rate{10, 60'000ms, 2};  // a start every 6 s, 12 s of tolerance
  CHECK(next_start_at_ms(rate, 100'000, 50'000) == 88'000);
  CHECK_FALSE(next_start_at_ms(rate, 100'000, 88'000));
  CHECK_FALSE(next_start_at_ms(rate, std::nullopt, 0));
  CHECK_FALSE(next_start_at_ms(std::nullopt, 100'000, 0));
  CHECK(next_start_at_ms(jq::api::RateLimit{1, 1000ms, 0}, 5'000, 0) == 5'000);
}

TEST_CASE("ConstraintCache: takes what Redis holds after Redis lost its constraints", "[redis]") {
  // Redis restarted without its data (or was flushed): the version goes back. The cache kept the
  // higher version's definitions for ever, and refused the new ones until their version passed it.
  Fixture f;
  REQUIRE(f.h.run(f.store.create(mail())));
  REQUIRE(f.h.run(f.store.remove("mail")));
  REQUIRE(f.h.run(f.store.create(mail())));  // version 3
  ConstraintCache cache(f.h.client().executor(), f.store);
  cache.start();
  run_until(f.h, [&] { return cache.current()->version() == 3; });
  REQUIRE(cache.current()->constraints().size() == 1);

  f.r.call({"DEL", f.keys.constraints(), f.keys.constraints_version()});
  cache.on_event(
      jq::events::Event{jq::events::EventKind::constraints, ""});  // as after a reconnect
  run_until(f.h, [&] { return cache.current()->version() == 0; });
  CHECK(cache.current()->version() == 0);
  CHECK(cache.current()->constraints().empty());

  jq::api::Constraint other = mail();
  other.name = "other";
  REQUIRE(f.h.run(f.store.create(other)));  // version 1
  cache.on_event(jq::events::Event{jq::events::EventKind::constraints, "1"});
  run_until(f.h, [&] { return cache.current()->version() == 1; });
  REQUIRE(cache.current()->constraints().size() == 1);
  CHECK(cache.current()->constraints()[0].name == "other");
  cache.stop();
  run_until(
      f.h, [] { return false; }, 50ms);
}
