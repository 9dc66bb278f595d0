// What a due tick does (the contract's "Missed ticks"), the window start_at/end_at, the first
// tick of `every`, and the preview, as pure functions of the time.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/schedule.hpp"
#include "api/timestamp.hpp"
#include "src/schedules/ticks.hpp"

using jq::schedules::format_in_zone;
using jq::schedules::plan_tick;
using jq::schedules::tick_after;
using jq::schedules::timetable_of;
using nlohmann::json;

namespace {

std::int64_t at(std::string_view rfc3339) {
  auto ms = jq::api::parse_timestamp_ms(rfc3339);
  REQUIRE(ms);
  return *ms;
}

jq::api::Schedule schedule(json fields) {
  fields["name"] = "s";
  fields["job"] = {{"name", "j"}};
  auto s = jq::api::decode_schedule(fields.dump(), jq::api::MediaType::json);
  REQUIRE(s);
  return *s;
}

}  // namespace

TEST_CASE("a tick on time runs, and the next one follows it", "[unit]") {
  const auto s = schedule({{"cron", "*/5 * * * * *"}});
  const auto t = timetable_of(s, 0);
  const auto plan = plan_tick(s, t, at("2026-05-01T10:00:05Z"), at("2026-05-01T10:00:05.030Z"));
  CHECK(plan.run);
  CHECK(plan.tick_ms == at("2026-05-01T10:00:05Z"));
  CHECK(plan.missed == 0);
  CHECK(plan.after_ms == at("2026-05-01T10:00:10Z"));
}

TEST_CASE("a tick found due in time is on time however late it is made, one due since is not",
          "[unit]") {
  const auto skip = schedule({{"every", 2}, {"missed", "skip"}});
  const auto t = timetable_of(skip, at("2026-05-01T10:00:00Z"));
  // Found due at :02.100 (0.1 s late), made at :03.500 (the ticks due with it took that long).
  auto plan = plan_tick(skip, t, at("2026-05-01T10:00:02Z"), at("2026-05-01T10:00:03.500Z"),
                        at("2026-05-01T10:00:02.100Z"));
  CHECK(plan.run);
  CHECK(plan.tick_ms == at("2026-05-01T10:00:02Z"));
  CHECK(plan.missed == 0);
  CHECK(plan.after_ms == at("2026-05-01T10:00:04Z"));
  // Made at :05.500: the :04 tick fell due after it was found, and is 1.5 s late by now; both
  // are missed.
  plan = plan_tick(skip, t, at("2026-05-01T10:00:02Z"), at("2026-05-01T10:00:05.500Z"),
                   at("2026-05-01T10:00:02.100Z"));
  CHECK_FALSE(plan.run);
  CHECK(plan.missed == 2);
  CHECK(plan.after_ms == at("2026-05-01T10:00:06Z"));
  // Found at :03.500 (1.5 s late): missed, however soon it is made.
  plan = plan_tick(skip, t, at("2026-05-01T10:00:02Z"), at("2026-05-01T10:00:03.500Z"),
                   at("2026-05-01T10:00:03.500Z"));
  CHECK_FALSE(plan.run);
  CHECK(plan.missed == 1);
}

TEST_CASE("ticks missed while no master ran: run_once runs the latest, skip runs none", "[unit]") {
  const auto run_once = schedule({{"cron", "*/5 * * * * *"}});
  const auto t = timetable_of(run_once, 0);
  // Down from 10:00:05 (due) until 10:00:23: ticks at :05 :10 :15 :20 have all passed by > 1 s.
  auto plan = plan_tick(run_once, t, at("2026-05-01T10:00:05Z"), at("2026-05-01T10:00:23Z"));
  CHECK(plan.run);
  CHECK(plan.tick_ms == at("2026-05-01T10:00:20Z"));
  CHECK(plan.missed == 3);
  CHECK(plan.after_ms == at("2026-05-01T10:00:25Z"));

  const auto skip = schedule({{"cron", "*/5 * * * * *"}, {"missed", "skip"}});
  plan = plan_tick(skip, t, at("2026-05-01T10:00:05Z"), at("2026-05-01T10:00:23Z"));
  CHECK_FALSE(plan.run);
  CHECK(plan.missed == 4);
  CHECK(plan.after_ms == at("2026-05-01T10:00:25Z"));

  // Back just in time for the latest tick: it is on time, only the earlier ones are missed.
  plan = plan_tick(skip, t, at("2026-05-01T10:00:05Z"), at("2026-05-01T10:00:20.500Z"));
  CHECK(plan.run);
  CHECK(plan.tick_ms == at("2026-05-01T10:00:20Z"));
  CHECK(plan.missed == 3);
}

TEST_CASE("every counts its missed ticks without walking them", "[unit]") {
  const auto s = schedule({{"every", 1}});
  const std::int64_t anchor = at("2026-05-01T00:00:00Z");
  const auto t = timetable_of(s, anchor);
  // A year down: 31,536,000 ticks, counted at once.
  const auto plan = plan_tick(s, t, anchor + 1000, anchor + 31'536'000'000 + 500);
  CHECK(plan.run);
  CHECK(plan.missed == 31'535'999);
  CHECK(plan.tick_ms == anchor + 31'536'000'000);
}

TEST_CASE("a cron missed more than the walk's bound is estimated, and its last tick is exact",
          "[unit]") {
  const auto s = schedule({{"cron", "* * * * * *"}});
  const auto t = timetable_of(s, 0);
  const std::int64_t from = at("2026-05-01T00:00:00Z");
  const auto plan = plan_tick(s, t, from, from + 200'000'000 + 300);  // 200,000 s later
  CHECK(plan.tick_ms == from + 200'000'000);
  CHECK(plan.missed == 200'000);
  CHECK(plan.after_ms == from + 200'001'000);
}

TEST_CASE("every ticks N seconds after its anchor, or from start_at", "[unit]") {
  const std::int64_t created = at("2026-05-01T10:00:00.250Z");
  auto s = schedule({{"every", 300}});
  CHECK(tick_after(s, timetable_of(s, created), created) == created + 300'000);
  s = schedule({{"every", 300}, {"start_at", "2026-06-01T00:00:00Z"}});
  CHECK(tick_after(s, timetable_of(s, created), created) == at("2026-06-01T00:00:00Z"));
  CHECK(tick_after(s, timetable_of(s, created), at("2026-06-01T00:00:00Z")) ==
        at("2026-06-01T00:05:00Z"));
}

TEST_CASE("no tick after end_at, the missed ones up to it still count", "[unit]") {
  const auto s = schedule({{"cron", "0 * * * *"}, {"end_at", "2026-05-01T12:00:00Z"}});
  const auto t = timetable_of(s, 0);
  CHECK(tick_after(s, t, at("2026-05-01T11:30:00Z")) == at("2026-05-01T12:00:00Z"));
  CHECK_FALSE(tick_after(s, t, at("2026-05-01T12:00:00Z")));
  const auto plan = plan_tick(s, t, at("2026-05-01T10:00:00Z"), at("2026-05-01T15:00:00Z"));
  CHECK(plan.run);
  CHECK(plan.tick_ms == at("2026-05-01T12:00:00Z"));
  CHECK(plan.missed == 2);
  CHECK(plan.after_ms == 0);
}

TEST_CASE("a preview shows a skipped wall time running right after the gap", "[unit]") {
  auto p = jq::api::decode_schedule_preview(
      R"({"cron":"30 2 * * *","timezone":"Europe/Berlin","from":"2026-03-27T12:00:00Z","count":4})",
      jq::api::MediaType::json);
  REQUIRE(p);
  std::vector<std::string> runs;
  for (std::int64_t ms : jq::schedules::preview_ticks(*p, 0)) {
    runs.push_back(format_in_zone(ms, p->zone));
  }
  CHECK(runs == std::vector<std::string>{"2026-03-28T02:30:00+01:00", "2026-03-29T03:00:00+02:00",
                                         "2026-03-30T02:30:00+02:00", "2026-03-31T02:30:00+02:00"});
}

TEST_CASE("a preview of every without start_at counts from `from`", "[unit]") {
  auto p = jq::api::decode_schedule_preview(
      R"({"every":90,"from":"2026-01-01T00:00:00Z","count":2})", jq::api::MediaType::json);
  REQUIRE(p);
  CHECK(jq::schedules::preview_ticks(*p, 0) ==
        std::vector<std::int64_t>{at("2026-01-01T00:01:30Z"), at("2026-01-01T00:03:00Z")});
}
