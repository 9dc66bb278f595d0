// Schedule bodies (POST, PUT, PATCH, preview) decoded and validated, every error naming its
// field; and the object encoded back, which is also how it is stored.
#include <catch2/catch.hpp>

#include <string>

#include "api/schedule.hpp"
#include "api_test_msgpack.hpp"

using jq::api::ApiError;
using jq::api::ErrorCode;
using jq::api::MediaType;
using jq::api::MissedPolicy;
using jq::api::Overlap;
using jq::api::Schedule;
using nlohmann::json;

namespace {

using Result = jq::Expected<Schedule, ApiError>;

Result create_json(const json& body) {
  return jq::api::decode_schedule(body.dump(), MediaType::json);
}

json minimal() {
  return {{"name", "nightly"}, {"cron", "30 2 * * *"}, {"job", {{"name", "report.build"}}}};
}

// A valid schedule with one field added or replaced.
json with(const std::string& field, json value) {
  json body = minimal();
  body[field] = std::move(value);
  return body;
}

void check_error(const Result& result, std::string_view field, std::string_view message_part) {
  REQUIRE_FALSE(result);
  CHECK(result.error().code == ErrorCode::invalid_job);
  CHECK(result.error().field == std::string(field));
  CHECK_THAT(result.error().message, Catch::Contains(std::string(message_part)));
}

}  // namespace

TEST_CASE("a minimal schedule takes the defaults", "[unit]") {
  const auto s = create_json(minimal());
  REQUIRE(s);
  CHECK(s->name == "nightly");
  CHECK(s->cron == "30 2 * * *");
  CHECK(s->every_s == 0);
  CHECK(s->timezone == "UTC");
  REQUIRE(s->zone != nullptr);
  CHECK(s->overlap == Overlap::allow);
  CHECK(s->missed == MissedPolicy::run_once);
  CHECK_FALSE(s->start_at);
  CHECK_FALSE(s->end_at);
  CHECK_FALSE(s->paused);
}

TEST_CASE("a schedule with every field keeps every value and encodes back to what was given",
          "[unit]") {
  const json body = {{"name", "nightly-report"},
                     {"cron", nullptr},
                     {"every", 300},
                     {"timezone", "Europe/Berlin"},
                     {"job",
                      {{"name", "report.build"},
                       {"argument", {{"kind", "nightly"}}},
                       {"priority", 5},
                       {"timeout", 600}}},
                     {"overlap", "skip"},
                     {"missed", "skip"},
                     {"start_at", "2026-12-01T00:00:00Z"},
                     {"end_at", "2027-01-01T00:00:00+01:00"},
                     {"paused", true}};
  const auto s = create_json(body);
  REQUIRE(s);
  CHECK(s->every_s == 300);
  CHECK(s->cron.empty());
  CHECK(s->timezone == "Europe/Berlin");
  CHECK(s->overlap == Overlap::skip);
  CHECK(s->missed == MissedPolicy::skip);
  REQUIRE(s->start_at);
  CHECK(s->start_at->ms == 1796083200000);
  CHECK(s->end_at->text == "2027-01-01T00:00:00+01:00");
  CHECK(s->paused);
  json view = jq::api::schedule_view(*s);
  const auto encoded = jq::api::encode_schedule(*s);
  // The stored form decodes to the same schedule (what the stores rely on).
  const auto back = jq::api::decode_schedule(encoded, MediaType::msgpack);
  REQUIRE(back);
  CHECK(*back == *s);
  CHECK(view["every"] == 300);
  CHECK(view["cron"].is_null());
  CHECK(view["start_at"] == "2026-12-01T00:00:00Z");
}

TEST_CASE("a schedule's job template keeps its bytes and gets the defaults when it ticks",
          "[unit]") {
  const auto s = create_json(with("job", {{"name", "mail.send"}, {"priority", -3}}));
  REQUIRE(s);
  jq::api::JobDefaults defaults;
  defaults.max_retry = 7;
  const auto job = jq::api::template_job(*s, defaults);
  REQUIRE(job);
  CHECK(job->name == "mail.send");
  CHECK(job->priority == -3);
  CHECK(job->max_retry == 7);
}

TEST_CASE("every bad schedule field is refused naming it", "[unit]") {
  check_error(create_json(with("cron", "30 25 * * *")), "cron", "hour field");
  check_error(create_json(with("cron", "61 * * * *")), "cron", "61");
  // A day no month given has never comes; Vixie's "either day" rule still runs this one.
  check_error(create_json(with("cron", "0 0 30 2 *")), "cron", "day-of-month field (3rd of 5)");
  check_error(create_json(with("cron", "0 0 0 31 4,6 *")), "cron", "would never run");
  CHECK(create_json(with("cron", "0 0 30 2 1")));
  CHECK(create_json(with("cron", "0 0 29 2 *")));
  check_error(create_json(with("cron", 5)), "cron", "must be a string");
  check_error(create_json(with("every", 60)), "cron", "cannot be given together");
  json neither = minimal();
  neither.erase("cron");
  check_error(create_json(neither), "cron", "needs cron");
  json every = minimal();
  every.erase("cron");
  every["every"] = 0;
  check_error(create_json(every), "every", "every");
  every["every"] = 31536001;
  check_error(create_json(every), "every", "every");
  every["every"] = 1.5;
  check_error(create_json(every), "every", "integer");
  check_error(create_json(with("timezone", "Mars/Olympus")), "timezone", "IANA");
  check_error(create_json(with("timezone", "../../etc/passwd")), "timezone", "IANA");
  check_error(create_json(with("job", {{"name", "x"}, {"priority", "high"}})), "job.priority",
              "job.priority must be an integer");
  check_error(create_json(with("job", {{"name", "x"}, {"delay", 5}})), "job.delay",
              "ticks say when");
  check_error(create_json(with("job", {{"name", "x"}, {"run_at", "2026-01-01T00:00:00Z"}})),
              "job.run_at", "ticks say when");
  for (const char* merge : {"replace", "append"}) {
    check_error(
        create_json(with("job", {{"name", "x"}, {"unique_key", "k"}, {"on_duplicate", merge}})),
        "job.on_duplicate", "nothing to merge");
  }
  check_error(create_json(with("job", {{"name", "x"}, {"on_duplicate", "keep"}})),
              "job.on_duplicate", "only to a unique job");
  check_error(create_json(with("job", {{"priority", 1}})), "job.name", "name");
  check_error(create_json(with("job", "report")), "job", "a job as in POST /v1/jobs");
  check_error(create_json(with("overlap", "queue")), "overlap", "\"allow\" or \"skip\"");
  check_error(create_json(with("missed", "all")), "missed", "\"run_once\" or \"skip\"");
  check_error(create_json(with("start_at", "2026-12-01 00:00")), "start_at", "ISO 8601");
  check_error(create_json(with("paused", "yes")), "paused", "paused");
  check_error(create_json(with("name", "has space")), "name", "1-128 bytes");
  check_error(create_json(with("colour", "blue")), "colour", "colour");
  json backwards = with("start_at", "2026-12-02T00:00:00Z");
  backwards["end_at"] = "2026-12-01T00:00:00Z";
  check_error(create_json(backwards), "end_at", "before start_at");
  json no_job = minimal();
  no_job.erase("job");
  check_error(create_json(no_job), "job", "job");
  // A null job was stored as a schedule without one: 201, then 500 on every GET, never run.
  check_error(create_json(with("job", nullptr)), "job", "job is required");
}

TEST_CASE("a body that is not a schedule map is a bad request", "[unit]") {
  const auto r = jq::api::decode_schedule("[1,2]", MediaType::json);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::bad_request);
  CHECK_FALSE(jq::api::decode_schedule("{", MediaType::json));
  // JSON that MessagePack cannot hold: named by its path, which stops at the job's argument.
  const std::string big = "99999999999999999999999";
  const auto in_argument = jq::api::decode_schedule(
      R"({"name":"s","every":60,"job":{"name":"j","argument":{"n":[)" + big + "]}}}",
      MediaType::json);
  REQUIRE_FALSE(in_argument);
  CHECK(in_argument.error().field == "job.argument");
  const auto in_priority = jq::api::decode_schedule(
      R"({"name":"s","every":60,"job":{"name":"j","priority":)" + big + "}}", MediaType::json);
  REQUIRE_FALSE(in_priority);
  CHECK(in_priority.error().field == "job.priority");
}

TEST_CASE("what GET adds can be sent back in a PUT", "[unit]") {
  json body = minimal();
  body["next_run_at"] = "2026-01-01T02:30:00+00:00";
  body["next_runs"] = json::array({"2026-01-01T02:30:00+00:00"});
  body["last_run_at"] = nullptr;
  body["last_job_id"] = nullptr;
  body["runs"] = 3;
  body["skipped"] = 0;
  body["missed_count"] = 1;
  body["duplicates"] = 0;
  const auto s = jq::api::decode_schedule_replace(body.dump(), MediaType::json, "nightly");
  REQUIRE(s);
  CHECK(s->cron == "30 2 * * *");
}

TEST_CASE("PUT takes the name from the URL and refuses another", "[unit]") {
  json body = minimal();
  body.erase("name");
  const auto s = jq::api::decode_schedule_replace(body.dump(), MediaType::json, "from-url");
  REQUIRE(s);
  CHECK(s->name == "from-url");
  check_error(jq::api::decode_schedule_replace(minimal().dump(), MediaType::json, "other"), "name",
              "name in the URL");
}

TEST_CASE("a patch changes only what it gives, cron and every replace each other", "[unit]") {
  auto base = create_json(with("start_at", "2026-12-01T00:00:00Z"));
  REQUIRE(base);
  auto p =
      jq::api::decode_schedule_patch(R"({"every":60,"end_at":null})", MediaType::json, "nightly");
  REQUIRE(p);
  auto patched = jq::api::apply_patch(*base, *p);
  REQUIRE(patched);
  CHECK(patched->every_s == 60);
  CHECK(patched->cron.empty());
  CHECK(patched->start_at);  // untouched
  CHECK(jq::api::timetable_changed(*base, *patched));

  p = jq::api::decode_schedule_patch(R"({"start_at":null,"paused":true,"overlap":null})",
                                     MediaType::json, "nightly");
  REQUIRE(p);
  patched = jq::api::apply_patch(*base, *p);
  REQUIRE(patched);
  CHECK_FALSE(patched->start_at);
  CHECK(patched->paused);
  CHECK(patched->overlap == Overlap::allow);
  CHECK(patched->cron == "30 2 * * *");

  p = jq::api::decode_schedule_patch(R"({"paused":true})", MediaType::json, "nightly");
  REQUIRE(p);
  CHECK_FALSE(jq::api::timetable_changed(*base, *jq::api::apply_patch(*base, *p)));

  const auto both = jq::api::decode_schedule_patch(R"({"cron":"* * * * *","every":5})",
                                                   MediaType::json, "nightly");
  REQUIRE_FALSE(both);
  CHECK(both.error().field == "cron");
  p = jq::api::decode_schedule_patch(R"({"end_at":"2026-11-01T00:00:00Z"})", MediaType::json,
                                     "nightly");
  REQUIRE(p);
  check_error(jq::api::apply_patch(*base, *p), "end_at", "before start_at");
}

TEST_CASE("a preview request takes the timetable fields, from and count", "[unit]") {
  auto p = jq::api::decode_schedule_preview(
      R"({"cron":"30 2 * * *","timezone":"Europe/Berlin","from":"2026-03-28T00:00:00Z","count":3})",
      MediaType::json);
  REQUIRE(p);
  CHECK(p->count == 3);
  CHECK(p->from_ms == 1774656000000);
  p = jq::api::decode_schedule_preview(R"({"every":10})", MediaType::json);
  REQUIRE(p);
  CHECK(p->count == 10);
  CHECK_FALSE(p->from_ms);
  const auto bad = jq::api::decode_schedule_preview(R"({"every":10,"count":101})", MediaType::json);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().field == "count");
  const auto none = jq::api::decode_schedule_preview(R"({"timezone":"UTC"})", MediaType::json);
  REQUIRE_FALSE(none);
  CHECK(none.error().field == "cron");
}
