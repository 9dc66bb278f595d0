// GET /v1/jobs's query: defaults, refusals naming the parameter, and cursors that round-trip.
#include <catch2/catch.hpp>

#include "api/job_browse.hpp"

using jq::api::BrowseCursor;
using jq::api::BrowseState;
using jq::api::format_cursor;
using jq::api::parse_job_browse;

TEST_CASE("browse query defaults: queued, every name, 100 a page, from the start", "[unit]") {
  auto q = parse_job_browse("");
  REQUIRE(q);
  CHECK(q->state == BrowseState::queued);
  CHECK(q->name.empty());
  CHECK(q->limit == 100);
  CHECK_FALSE(q->after);
}

TEST_CASE("a cursor given out is read back as the same place", "[unit]") {
  const BrowseCursor queued{BrowseState::queued, -7, 3, "0000AbCdE000000012"};
  const BrowseCursor dead{BrowseState::dead, 1764081234567, 15, "00000001z"};
  for (const BrowseCursor& c : {queued, dead}) {
    auto q = parse_job_browse("state=" + std::string(jq::api::to_string(c.state)) +
                              "&name=a.b&limit=5&cursor=" + format_cursor(c));
    REQUIRE(q);
    CHECK(q->name == "a.b");
    CHECK(q->limit == 5);
    REQUIRE(q->after);
    CHECK(*q->after == c);
  }
}

TEST_CASE("browse refusals name the parameter", "[unit]") {
  const auto field = [](std::string_view query) {
    auto q = parse_job_browse(query);
    REQUIRE_FALSE(q);
    return q.error().field.value_or("");
  };
  CHECK(field("state=done") == "state");
  CHECK(field("name=-x") == "name");
  CHECK(field("limit=1.5") == "limit");
  CHECK(field("cursor=") == "cursor");
  CHECK(field("cursor=x.1.0.000000001") == "cursor");
  CHECK(field("cursor=s.1.-1.000000001") == "cursor");
  CHECK(field("cursor=s.1.0.00000000!") == "cursor");
  CHECK(field("cursor=s.1e3.0.000000001") == "cursor");
  CHECK(field("state=running&cursor=s.1.0.000000001") == "cursor");
}
