// The pub/sub events masters exchange: what the scripts publish parses back exactly.
#include <catch2/catch.hpp>

#include "src/events/event.hpp"

using jq::events::Event;
using jq::events::EventKind;
using jq::events::parse_event;
using jq::events::ReadyHead;

TEST_CASE("a ready announcement carries the queue's shard, priority and member", "[unit]") {
  auto e = parse_event("p send_email 3 -2147483648 0Ab9xYz0100000000K");
  REQUIRE(e);
  CHECK(e->kind == EventKind::pushed);
  CHECK(e->arg == "send_email");
  REQUIRE(e->head);
  CHECK(*e->head == ReadyHead{3, -2147483648LL, "0Ab9xYz0100000000K"});
  CHECK(format_event(*e) == "p send_email 3 -2147483648 0Ab9xYz0100000000K");
}

TEST_CASE("a push event with only a name means any shard of it", "[unit]") {
  auto e = parse_event("p email");
  REQUIRE(e);
  CHECK(e->arg == "email");
  CHECK_FALSE(e->head);
}

TEST_CASE("a malformed announcement still names its queue, without a head", "[unit]") {
  for (const char* payload : {"p email x 1 m", "p email 1 1.5 m", "p email 1 2"}) {
    auto e = parse_event(payload);
    REQUIRE(e);
    CHECK(e->arg == "email");
    CHECK_FALSE(e->head);
  }
  CHECK_FALSE(parse_event(""));
  CHECK_FALSE(parse_event("z"));
}

TEST_CASE("the other events keep their argument", "[unit]") {
  CHECK(parse_event("r 3-00000000A")->arg == "3-00000000A");
  CHECK(parse_event("s 1700000000000")->kind == EventKind::scheduled);
  CHECK(parse_event("w")->kind == EventKind::workers);
  CHECK(parse_event("q")->kind == EventKind::paused);
}

TEST_CASE("a constraints event carries the new version, or none after a reconnect", "[unit]") {
  auto e = parse_event("c 42");
  REQUIRE(e);
  CHECK(e->kind == EventKind::constraints);
  CHECK(e->arg == "42");
  CHECK(format_event(*e) == "c 42");
  CHECK(parse_event("c")->arg.empty());
  CHECK(format_event(Event{EventKind::constraints, {}}) == "c");
}

TEST_CASE("a schedules event names the shard and the schedule, or none after a reconnect",
          "[unit]") {
  auto e = parse_event("t 3 nightly-report");
  REQUIRE(e);
  CHECK(e->kind == EventKind::schedules);
  CHECK(e->arg == "3 nightly-report");
  CHECK(format_event(*e) == "t 3 nightly-report");
  CHECK(parse_event("t")->arg.empty());
  CHECK(format_event(Event{EventKind::schedules, {}}) == "t");
}

TEST_CASE("a busy event names the worker and until when it is held back", "[unit]") {
  auto e = parse_event("b w12 1700000003000");
  REQUIRE(e);
  CHECK(e->kind == EventKind::busy);
  CHECK(e->arg == "w12");
  CHECK(e->until_ms == 1700000003000);
  CHECK(format_event(*e) == "b w12 1700000003000");
  CHECK_FALSE(parse_event("b w12"));
  CHECK_FALSE(parse_event("b w12 soon"));
  CHECK_FALSE(parse_event("b"));
}
