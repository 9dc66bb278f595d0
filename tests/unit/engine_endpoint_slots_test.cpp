// EndpointSlots: in-flight jobs, held slots and hold-offs per endpoint, on an injected clock.
#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>

#include "src/dispatch/worker_call.hpp"
#include "src/scheduler/endpoint_slots.hpp"

using jq::dispatch::AttemptEnd;
using jq::scheduler::EndpointSlots;
using jq::scheduler::EndpointState;
using jq::scheduler::kFullPause;
using jq::scheduler::kMaxBatch;
using jq::scheduler::kSlotLinger;
using jq::scheduler::kUnreachableMax;
using jq::scheduler::kUnreachableMin;
using jq::scheduler::SteadyTime;
using jq::store::ReservedJob;
using jq::workers::Endpoint;
using namespace std::chrono_literals;

namespace {

const SteadyTime t0 = SteadyTime{} + 1000h;

Endpoint endpoint(const std::string& id, int concurrency, std::vector<std::string> names = {}) {
  Endpoint e;
  e.id = id;
  e.url = "http://127.0.0.1:1/" + id;
  e.concurrency = concurrency;
  e.all_names = names.empty();
  e.names = std::move(names);
  return e;
}

EndpointSlots with(std::vector<Endpoint> endpoints) {
  EndpointSlots slots;
  slots.update(std::move(endpoints), [](const Endpoint&) { return nullptr; });
  return slots;
}

std::vector<std::string> ids(const std::vector<EndpointState*>& states) {
  std::vector<std::string> out;
  for (const auto* s : states) out.push_back(s->endpoint->id);
  return out;
}

AttemptEnd answered(std::chrono::microseconds took = 1ms) {
  AttemptEnd end;
  end.took = took;
  return end;
}
AttemptEnd busy(std::chrono::milliseconds hold_off) {
  return AttemptEnd{AttemptEnd::Verdict::busy, hold_off, {}, {}};
}
AttemptEnd unreachable() {
  return AttemptEnd{AttemptEnd::Verdict::unreachable, 0ms, "connection refused", {}};
}

// Slots leased for `jobs` and the jobs started on them, as the scheduler does.
void start(EndpointSlots& slots, EndpointState& state, int jobs) {
  state.held += jobs;
  slots.started(state, jobs);
}

}  // namespace

TEST_CASE("open endpoints come fewest outstanding first, full ones are left out", "[unit]") {
  auto slots = with({endpoint("a", 4), endpoint("b", 4), endpoint("c", 1)});
  start(slots, *slots.find("a"), 3);
  start(slots, *slots.find("b"), 1);
  start(slots, *slots.find("c"), 1);
  CHECK(ids(slots.open(t0)) == std::vector<std::string>{"b", "a"});
}

TEST_CASE("an endpoint wants its free slots, at most a batch", "[unit]") {
  auto slots = with({endpoint("a", 10'000)});
  auto open = slots.open(t0);
  CHECK(EndpointSlots::want(*slots.find("a"), open) == kMaxBatch);
  start(slots, *slots.find("a"), 9'990);
  CHECK(EndpointSlots::want(*slots.find("a"), slots.open(t0)) == 10);
}

TEST_CASE("endpoints serving the same names share by fewest outstanding", "[unit]") {
  auto slots = with({endpoint("a", 8, {"mail"}), endpoint("b", 8, {"mail", "resize"}),
                     endpoint("c", 8, {"other"})});
  start(slots, *slots.find("b"), 2);
  const auto open = slots.open(t0);
  // a takes enough to get one past b (3), not its 8 free slots; c shares with nobody.
  CHECK(EndpointSlots::want(*slots.find("a"), open) == 3);
  CHECK(EndpointSlots::want(*slots.find("c"), open) == 8);
  CHECK(EndpointSlots::want(*slots.find("b"), open) == 1);  // at least one
}

TEST_CASE("endpoints share in proportion to their concurrency, a full rival holds none back",
          "[unit]") {
  auto slots = with({endpoint("big", 50, {"mail"}), endpoint("small", 8, {"mail"})});
  EndpointState& small = *slots.find("small");
  start(slots, small, 8);
  small.answer_time = 1ms;  // full, and open still: to reserve ahead
  start(slots, *slots.find("big"), 20);
  const auto open = slots.open(t0, 50ms);
  REQUIRE(open.size() == 2);
  CHECK(EndpointSlots::want(*slots.find("big"), open) == 30);
  small.inflight = 3;  // with one more, half of its slots: big may go to 25 of its 50
  CHECK(EndpointSlots::want(*slots.find("big"), slots.open(t0, 50ms)) == 5);
  small.inflight = 2;  // 3 of 8 is 18.75 of 50: big, at 20, takes one
  CHECK(EndpointSlots::want(*slots.find("big"), slots.open(t0, 50ms)) == 1);
  CHECK(EndpointSlots::want(small, slots.open(t0, 50ms)) == 2);  // 21 of 50 is 3.36 of 8
}

TEST_CASE("an endpoint's room is its free slots, its rivals' room theirs that serve its names",
          "[unit]") {
  auto slots = with({endpoint("big", 100, {"mail"}), endpoint("small", 8, {"mail"}),
                     endpoint("full", 2, {"mail"}), endpoint("other", 8, {"resize"})});
  start(slots, *slots.find("big"), 20);
  start(slots, *slots.find("small"), 3);
  start(slots, *slots.find("full"), 2);
  const auto open = slots.open(t0);
  CHECK(EndpointSlots::room(*slots.find("big")) == 64);  // at most a batch
  CHECK(EndpointSlots::room(*slots.find("small")) == 5);
  CHECK(EndpointSlots::rivals_room(*slots.find("big"), open) == 5);
  CHECK(EndpointSlots::rivals_room(*slots.find("small"), open) == 80);
  CHECK(EndpointSlots::rivals_room(*slots.find("other"), open) == 0);
}

TEST_CASE(
    "an endpoint serves exactly its names, and rivals of 1,000 names each share only the one in "
    "common",
    "[unit]") {
  std::vector<std::string> first, second;
  for (int i = 0; i < 1000; ++i) {
    first.push_back("a" + std::to_string(i));
    second.push_back("b" + std::to_string(i));
  }
  second.back() = "a999";  // the one name in common, last in both lists
  auto slots = with({endpoint("x", 8, first), endpoint("y", 8, second), endpoint("z", 8, {"b0"})});
  const EndpointState& x = *slots.find("x");
  CHECK(x.serves("a0"));
  CHECK(x.serves("a999"));
  CHECK_FALSE(x.serves("b0"));
  CHECK_FALSE(x.serves("a1000"));
  CHECK(slots.find("y")->serves("a999"));
  start(slots, *slots.find("y"), 2);
  start(slots, *slots.find("z"), 5);
  const auto open = slots.open(t0);
  CHECK(EndpointSlots::want(x, open) == 3);                 // bounded by y (a999), not by z
  CHECK(EndpointSlots::want(*slots.find("z"), open) == 1);  // bounded by y (b0)
}

TEST_CASE("a finished attempt keeps its slot held, idle slots go back after the linger", "[unit]") {
  auto slots = with({endpoint("a", 2)});
  EndpointState& a = *slots.find("a");
  start(slots, a, 1);
  const auto follow = slots.finished("a", answered(), t0, false);
  REQUIRE(follow);
  CHECK_FALSE(follow->release_slot);
  CHECK(a.held == 1);
  CHECK(a.inflight == 0);

  slots.found_none(a, t0);
  CHECK(slots.releasable(t0 + kSlotLinger - 1ms).empty());
  CHECK(slots.next_wait(t0, true, 1s) == kSlotLinger);
  CHECK(slots.next_wait(t0, false, 1s) == 1s);  // Redis away: nothing to give back to
  REQUIRE(slots.releasable(t0 + kSlotLinger).size() == 1);
  CHECK(EndpointSlots::take_held(a) == 1);
  CHECK(a.held == 0);
  CHECK_FALSE(a.idle_since);

  slots.found_none(a, t0);
  slots.found_work(a);  // work found again before the linger ran out: the slot stays
  a.held = 1;
  CHECK(slots.releasable(t0 + 10 * kSlotLinger).empty());
}

TEST_CASE("a busy answer holds the endpoint back for its hold-off", "[unit]") {
  auto slots = with({endpoint("a", 2)});
  EndpointState& a = *slots.find("a");
  start(slots, a, 1);
  const auto follow = slots.finished("a", busy(2s), t0, false);
  REQUIRE(follow);
  CHECK(follow->mark_busy == 2000ms);  // told to every master: GET /v1/workers busy_until
  CHECK(slots.open(t0 + 1999ms).empty());
  CHECK(ids(slots.open(t0 + 2s)) == std::vector<std::string>{"a"});
  CHECK(slots.next_wait(t0, true, 10s) == 2s);
  // Held off, it keeps no slots it cannot use.
  CHECK(slots.releasable(t0).size() == 1);
  // A later, shorter hold-off does not shorten it.
  start(slots, a, 1);
  slots.finished("a", busy(1s), t0 + 100ms, false);
  CHECK(a.hold_until == t0 + 2s);
}

TEST_CASE("an unreachable endpoint backs off exponentially up to the cap, then recovers",
          "[unit]") {
  auto slots = with({endpoint("a", 1)});
  EndpointState& a = *slots.find("a");
  std::chrono::milliseconds expected = kUnreachableMin;
  SteadyTime now = t0;
  for (int i = 0; i < 10; ++i) {
    start(slots, a, 1);
    const auto follow = slots.finished("a", unreachable(), now, false);
    REQUIRE(follow);
    REQUIRE(follow->mark_down);
    CHECK(*follow->mark_down == expected);
    CHECK(slots.open(now + expected - 1ms).empty());
    CHECK(slots.open(now + expected).size() == 1);
    now += expected;
    expected = std::min(expected * 2, kUnreachableMax);
  }
  CHECK(a.unreachable_backoff == kUnreachableMax);
  start(slots, a, 1);
  const auto recovered = slots.finished("a", answered(), now, false);
  CHECK(recovered->mark_up);
  CHECK(a.unreachable_backoff == 0ms);
  start(slots, a, 1);
  CHECK_FALSE(slots.finished("a", answered(), now, false)->mark_up);  // said once
}

TEST_CASE("attempts that fail together hold an unreachable endpoint off once, not once each",
          "[unit]") {
  auto slots = with({endpoint("a", 16)});
  EndpointState& a = *slots.find("a");
  start(slots, a, 16);  // a worker killed with 16 jobs in flight: all 16 fail at once
  for (int i = 0; i < 16; ++i) {
    const auto follow = slots.finished("a", unreachable(), t0 + i * 1ms, false);
    REQUIRE(follow);
    CHECK(follow->mark_down == kUnreachableMin);
  }
  CHECK(a.unreachable_backoff == kUnreachableMin);
  CHECK(slots.open(t0 + kUnreachableMin + 15ms).size() == 1);  // back soon, not after the cap
  // A try after the hold that fails again is a second failure: the backoff doubles.
  const SteadyTime retry = t0 + kUnreachableMin + 15ms;
  start(slots, a, 2);
  CHECK(slots.finished("a", unreachable(), retry, false)->mark_down == 2 * kUnreachableMin);
  CHECK(slots.finished("a", unreachable(), retry + 1ms, false)->mark_down == 2 * kUnreachableMin);
  CHECK(slots.open(retry + 2 * kUnreachableMin - 1ms).empty());
  CHECK(slots.open(retry + 1ms + 2 * kUnreachableMin).size() == 1);
}

TEST_CASE("a full endpoint is asked again after the full pause", "[unit]") {
  auto slots = with({endpoint("a", 1)});
  slots.full(*slots.find("a"), t0);
  CHECK(slots.open(t0 + kFullPause - 1ms).empty());
  CHECK(slots.open(t0 + kFullPause).size() == 1);
}

TEST_CASE("a removed endpoint gives its held slots back and closes until its attempts end",
          "[unit]") {
  auto slots = with({endpoint("a", 4), endpoint("b", 4)});
  EndpointState& a = *slots.find("a");
  start(slots, a, 2);
  a.held = 1;
  const auto gone = slots.update({endpoint("b", 4)}, [](const Endpoint&) { return nullptr; });
  CHECK(gone.slots == std::vector<std::pair<std::string, int>>{{"a", 1}});
  CHECK(ids(slots.open(t0)) == std::vector<std::string>{"b"});
  CHECK(slots.finished("a", answered(), t0, false)->release_slot);  // not held for later
  REQUIRE(slots.find("a"));
  CHECK(slots.finished("a", answered(), t0, false)->release_slot);
  CHECK_FALSE(slots.find("a"));  // gone with its last attempt
  CHECK_FALSE(slots.finished("a", answered(), t0, false));
}

TEST_CASE("an endpoint registered again while its attempts ran opens again", "[unit]") {
  auto slots = with({endpoint("a", 4)});
  start(slots, *slots.find("a"), 1);
  slots.update({}, [](const Endpoint&) { return nullptr; });
  CHECK(slots.open(t0).empty());
  slots.update({endpoint("a", 4)}, [](const Endpoint&) { return nullptr; });
  CHECK(ids(slots.open(t0)) == std::vector<std::string>{"a"});
  CHECK(slots.find("a")->inflight == 1);
}

// A worker whose registration lapsed (or was deleted) while it ran jobs, and that registered again
// under a new id: the same server, still running them.
TEST_CASE("a url registered again under a new id counts the removed one's attempts", "[unit]") {
  auto slots = with({endpoint("a", 2)});
  start(slots, *slots.find("a"), 2);
  std::vector<std::string> restate;
  slots.update(
      {}, [](const Endpoint&) { return nullptr; }, &restate);
  Endpoint again = endpoint("b", 2);
  again.url = slots.find("a")->endpoint->url;
  slots.update(
      {again}, [](const Endpoint&) { return nullptr; }, &restate);
  CHECK(restate == std::vector<std::string>{"b"});  // its lease holds them now
  CHECK(slots.find("b")->inflight == 2);
  CHECK(slots.open(t0).empty());  // full: both slots run the old attempts
  CHECK(slots.lease_holder("a") == "b");
  // An old attempt that ends frees a slot of the new registration, held there for its next job.
  const auto follow = slots.finished("a", answered(), t0, false);
  REQUIRE(follow);
  CHECK_FALSE(follow->release_slot);
  CHECK(slots.find("b")->inflight == 1);
  CHECK(slots.find("b")->held == 1);
  CHECK(ids(slots.open(t0)) == std::vector<std::string>{"b"});
  // Its health is the new registration's: the same server.
  CHECK(slots.finished("a", unreachable(), t0, false)->mark_down);
  CHECK_FALSE(slots.find("a"));  // forgotten with its last attempt
  CHECK(slots.find("b")->inflight == 0);
  CHECK(slots.find("b")->hold_until > t0);
}

TEST_CASE("attempts taken in beyond the new registration's concurrency give their slots back",
          "[unit]") {
  auto slots = with({endpoint("a", 3)});
  start(slots, *slots.find("a"), 3);
  Endpoint again = endpoint("b", 1);
  again.url = slots.find("a")->endpoint->url;
  slots.update({again}, [](const Endpoint&) { return nullptr; });
  CHECK(slots.finished("a", answered(), t0, false)->release_slot);
  CHECK(slots.finished("a", answered(), t0, false)->release_slot);
  CHECK_FALSE(slots.finished("a", answered(), t0, false)->release_slot);  // within its one
  CHECK(slots.find("b")->held == 1);
}

TEST_CASE("an endpoint loaded again under its own id takes its attempts back from its heir",
          "[unit]") {
  auto slots = with({endpoint("a", 2)});
  start(slots, *slots.find("a"), 1);
  Endpoint again = endpoint("b", 2);
  again.url = slots.find("a")->endpoint->url;
  slots.update({again}, [](const Endpoint&) { return nullptr; });
  REQUIRE(slots.find("b")->inflight == 1);
  Endpoint back = endpoint("a", 2);
  back.url = "http://127.0.0.1:1/elsewhere";
  std::vector<std::string> restate;
  slots.update(
      {back, again}, [](const Endpoint&) { return nullptr; }, &restate);
  CHECK(restate == std::vector<std::string>{"a", "b"});  // both leases said again
  CHECK(slots.find("b")->inflight == 0);
  CHECK(slots.lease_holder("a") == "a");
  CHECK_FALSE(slots.finished("a", answered(), t0, false)->release_slot);
  CHECK(slots.find("a")->held == 1);
  CHECK(slots.find("b")->inflight == 0);
}

TEST_CASE("attempts taken in by a registration that lapsed too go on to the next one", "[unit]") {
  auto slots = with({endpoint("a", 4)});
  start(slots, *slots.find("a"), 1);
  const std::string url = slots.find("a")->endpoint->url;
  const auto at_url = [&](const std::string& id) {
    Endpoint e = endpoint(id, 4);
    e.url = url;
    return e;
  };
  slots.update({at_url("b")}, [](const Endpoint&) { return nullptr; });
  start(slots, *slots.find("b"), 1);
  CHECK(slots.find("b")->inflight == 2);
  std::vector<std::string> restate;
  slots.update(
      {at_url("c")}, [](const Endpoint&) { return nullptr; }, &restate);
  CHECK(restate == std::vector<std::string>{"c"});
  CHECK(slots.find("c")->inflight == 2);
  CHECK(slots.lease_holder("a") == "c");
  // A reservation's slots that got no job leave the removed ones for the heir too.
  CHECK(slots.unused("a", 1, false) == 0);
  CHECK_FALSE(slots.find("a"));
  CHECK(slots.find("b")->inflight == 1);
  CHECK(slots.find("c")->inflight == 1);
  CHECK(slots.find("c")->held == 1);
  CHECK_FALSE(slots.finished("b", answered(), t0, false)->release_slot);
  CHECK_FALSE(slots.find("b"));
  CHECK(slots.find("c")->inflight == 0);
  CHECK(slots.find("c")->held == 2);
}

// Other masters hold slots too: only a lease asked of Redis sees them all. Slots kept held after
// the concurrency went down would let every master go on at its old share.
TEST_CASE("a lowered concurrency gives held slots back and each running one as it frees",
          "[unit]") {
  auto slots = with({endpoint("a", 4)});
  EndpointState& a = *slots.find("a");
  start(slots, a, 3);
  a.held = 1;
  const auto gone = slots.update({endpoint("a", 2)}, [](const Endpoint&) { return nullptr; });
  CHECK(gone.slots == std::vector<std::pair<std::string, int>>{{"a", 1}});
  REQUIRE(slots.find("a"));
  CHECK(slots.find("a")->held == 0);
  for (int i = 0; i < 3; ++i) CHECK(slots.finished("a", answered(), t0, false)->release_slot);
  // Leased again under the new limit: kept between jobs as before.
  start(slots, *slots.find("a"), 1);
  CHECK_FALSE(slots.finished("a", answered(), t0, false)->release_slot);
  CHECK(slots.find("a")->held == 1);
}

TEST_CASE("while stopping, a finished attempt's slot goes back at once", "[unit]") {
  auto slots = with({endpoint("a", 4)});
  start(slots, *slots.find("a"), 1);
  CHECK(slots.finished("a", answered(), t0, true)->release_slot);
  CHECK(slots.find("a")->held == 0);
}

TEST_CASE("an endpoint keeps its connection pool until its url or ca_file changes", "[unit]") {
  boost::asio::io_context io;
  int made = 0;
  auto make_pool = [&](const Endpoint& e) {
    ++made;
    return std::make_shared<jq::dispatch::ConnectionPool>(io.get_executor(), e.address, nullptr,
                                                          e.ca_file, 1);
  };
  EndpointSlots slots;
  Endpoint e = endpoint("a", 1);
  slots.update({e}, make_pool);
  slots.update({e}, make_pool);
  CHECK(made == 1);
  e.ca_file = "/ca.pem";
  slots.update({e}, make_pool);
  CHECK(made == 2);
  e.url = "https://127.0.0.1:2/a";
  slots.update({e}, make_pool);
  CHECK(made == 3);
}

TEST_CASE("slots started that got no job are held again, or given back once gone", "[unit]") {
  auto slots = with({endpoint("a", 4)});
  EndpointState& a = *slots.find("a");
  a.held = 1;
  slots.started(a, 1);  // the claim of a push
  CHECK(a.inflight == 1);
  CHECK(slots.unused("a", 1, false) == 0);
  CHECK(a.inflight == 0);
  CHECK(a.held == 1);

  slots.started(a, 1);
  CHECK(slots.unused("a", 1, true) == 1);  // stopping: the slot goes back to Redis
  CHECK(a.held == 0);

  a.held = 3;
  slots.started(a, 3);  // a reservation of three that found one job
  CHECK(slots.unused("a", 2, false) == 0);
  CHECK(a.inflight == 1);
  CHECK(a.held == 2);

  slots.started(a, 2);
  slots.update({}, [](const Endpoint&) { return nullptr; });  // deregistered meanwhile
  CHECK(slots.unused("a", 2, false) == 2);
  REQUIRE(slots.find("a") != nullptr);  // the job found still runs there
  CHECK(slots.find("a")->inflight == 1);
  CHECK(slots.unused("a", 1, false) == 1);  // the last slot back: the endpoint is gone
  CHECK(slots.find("a") == nullptr);
}

namespace {

ReservedJob reserved(const std::string& name) {
  ReservedJob job;
  job.record->name = name;
  return job;
}

// `running` attempts started on `state` and their slots all taken, its answers taking `took`.
void busy_at_pace(EndpointSlots& slots, EndpointState& state, std::chrono::microseconds took) {
  state.answer_time = took;
  start(slots, state, state.endpoint->concurrency);
}

}  // namespace

TEST_CASE("an endpoint's answer time is a moving average of its answers, not of refusals",
          "[unit]") {
  auto slots = with({endpoint("a", 4)});
  EndpointState& a = *slots.find("a");
  CHECK(a.answer_time.count() == 0);
  start(slots, a, 4);
  slots.finished("a", answered(8ms), t0, false);
  CHECK(a.answer_time == 8ms);  // the first answer sets it
  slots.finished("a", answered(16ms), t0, false);
  CHECK(a.answer_time == 9ms);  // then each moves it by an eighth
  slots.finished("a", busy(50ms), t0, false);
  slots.finished("a", unreachable(), t0 + 100ms, false);
  CHECK(a.answer_time == 9ms);
}

TEST_CASE("a busy endpoint reserves ahead what it answers in the window, one per attempt at most",
          "[unit]") {
  auto slots = with({endpoint("a", 4)});
  EndpointState& a = *slots.find("a");
  start(slots, a, 4);
  // Its pace unknown: nothing ahead, and with every slot taken it does not reserve.
  CHECK(EndpointSlots::ahead(a, 0, slots.open(t0, 50ms), 50ms, t0) == 0);
  CHECK(slots.open(t0, 50ms).empty());

  a.answer_time = 1ms;  // 4 attempts answer 200 jobs in 50 ms: one each ahead
  CHECK(ids(slots.open(t0, 50ms)) == std::vector<std::string>{"a"});
  CHECK(EndpointSlots::ahead(a, 0, slots.open(t0, 50ms), 50ms, t0) == 4);
  CHECK(slots.open(t0).empty());  // no window: never ahead
  CHECK(EndpointSlots::ahead(a, 0, slots.open(t0), 0ms, t0) == 0);

  a.answer_time = 100ms;  // 4 attempts of 100 ms answer 2 jobs in 50 ms
  CHECK(EndpointSlots::ahead(a, 0, slots.open(t0, 50ms), 50ms, t0) == 2);
  a.answer_time = 1s;  // slow jobs: none ahead
  CHECK(EndpointSlots::ahead(a, 0, slots.open(t0, 50ms), 50ms, t0) == 0);
  CHECK(slots.open(t0, 50ms).empty());
}

TEST_CASE("jobs ahead count those held and those on their way, and the slots being filled",
          "[unit]") {
  auto slots = with({endpoint("a", 10)});
  EndpointState& a = *slots.find("a");
  a.answer_time = 1ms;
  start(slots, a, 6);
  const auto open = slots.open(t0, 50ms);
  // 6 running and 4 about to start: room for 10 ahead.
  CHECK(EndpointSlots::ahead(a, 4, open, 50ms, t0) == 10);
  a.ahead.push_back(reserved("n"));
  a.ahead_coming = 3;
  CHECK(EndpointSlots::ahead(a, 4, open, 50ms, t0) == 6);
  // One reservation never asks for more than a batch.
  auto big = with({endpoint("b", 1000)});
  EndpointState& b = *big.find("b");
  b.answer_time = 1ms;
  start(big, b, 1000);
  CHECK(EndpointSlots::ahead(b, 0, big.open(t0, 50ms), 50ms, t0) == kMaxBatch);
}

TEST_CASE("nothing is reserved ahead while a rival for the same names has a free slot", "[unit]") {
  auto slots =
      with({endpoint("a", 2, {"mail"}), endpoint("b", 2, {"mail"}), endpoint("c", 2, {"other"})});
  EndpointState& a = *slots.find("a");
  busy_at_pace(slots, a, 1ms);
  start(slots, *slots.find("c"), 1);
  // b can start mail jobs now: a keeps none ahead of it. c serves other names.
  CHECK(EndpointSlots::ahead(a, 0, slots.open(t0, 50ms), 50ms, t0) == 0);
  start(slots, *slots.find("b"), 2);
  CHECK(EndpointSlots::ahead(a, 0, slots.open(t0, 50ms), 50ms, t0) == 2);
  // While its jobs had constraints, none.
  a.no_ahead_until = t0 + 10s;
  CHECK(EndpointSlots::ahead(a, 0, slots.open(t0, 50ms), 50ms, t0) == 0);
  CHECK(EndpointSlots::ahead(a, 0, slots.open(t0 + 10s, 50ms), 50ms, t0 + 10s) == 2);
}

TEST_CASE("a held-off or removed endpoint reserves nothing ahead, and leaves its jobs ahead",
          "[unit]") {
  auto slots = with({endpoint("a", 2), endpoint("b", 2)});
  EndpointState& a = *slots.find("a");
  busy_at_pace(slots, a, 1ms);
  a.hold_until = t0 + 1s;
  CHECK(ids(slots.open(t0, 50ms)) == std::vector<std::string>{"b"});
  a.ahead.push_back(reserved("n"));
  a.ahead.push_back(reserved("m"));
  const auto gone = slots.update({endpoint("b", 2)}, [](const Endpoint&) { return nullptr; });
  REQUIRE(gone.jobs.size() == 2);
  CHECK(gone.jobs[0].record->name == "n");
  CHECK(gone.jobs[1].record->name == "m");
  CHECK(slots.find("a")->ahead.empty());  // kept while its attempts run, with nothing ahead
}

TEST_CASE("registered again with another url or names, an endpoint leaves its jobs ahead",
          "[unit]") {
  auto slots = with({endpoint("a", 2, {"mail"})});
  slots.find("a")->ahead.push_back(reserved("mail"));
  CHECK(slots.update({endpoint("a", 4, {"mail"})}, [](const Endpoint&) { return nullptr; })
            .jobs.empty());  // only its concurrency changed
  CHECK(slots.find("a")->ahead.size() == 1);
  const auto gone =
      slots.update({endpoint("a", 4, {"mail", "sms"})}, [](const Endpoint&) { return nullptr; });
  CHECK(gone.jobs.size() == 1);
  CHECK(slots.find("a")->ahead.empty());
}

TEST_CASE("a removed endpoint stays known until its last reservation is answered", "[unit]") {
  auto slots = with({endpoint("a", 2)});
  slots.find("a")->reserving = 1;  // a reservation of jobs ahead only: no slot counted
  slots.update({}, [](const Endpoint&) { return nullptr; });
  REQUIRE(slots.find("a"));
  CHECK(slots.find("a")->removed);
  slots.forget_if_gone("a");
  REQUIRE(slots.find("a"));
  slots.find("a")->reserving = 0;
  slots.forget_if_gone("a");
  CHECK_FALSE(slots.find("a"));
}

TEST_CASE("slots held for jobs ahead do not linger out", "[unit]") {
  auto slots = with({endpoint("a", 2)});
  EndpointState& a = *slots.find("a");
  a.held = 1;
  slots.found_none(a, t0);
  a.ahead_coming = 1;
  CHECK(slots.releasable(t0 + kSlotLinger).empty());
  a.ahead_coming = 0;
  a.ahead.push_back(reserved("n"));
  CHECK(slots.releasable(t0 + kSlotLinger).empty());
  a.ahead.clear();
  CHECK(slots.releasable(t0 + kSlotLinger).size() == 1);
}

TEST_CASE("jobs ahead are taken away by what picks them, the others keep their order", "[unit]") {
  auto slots = with({endpoint("a", 2)});
  EndpointState& a = *slots.find("a");
  for (const char* name : {"x", "paused", "y", "paused"}) a.ahead.push_back(reserved(name));
  const auto taken = EndpointSlots::take_ahead(
      a, [](const ReservedJob& job) { return job.record->name == "paused"; });
  CHECK(taken.size() == 2);
  REQUIRE(a.ahead.size() == 2);
  CHECK(a.ahead[0].record->name == "x");
  CHECK(a.ahead[1].record->name == "y");
}
