#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "api/job.hpp"
#include "api_test_msgpack.hpp"

using jq::api::ApiError;
using jq::api::decode_push;
using jq::api::ErrorCode;
using jq::api::is_valid_job_name;
using jq::api::JobDefaults;
using jq::api::MediaType;
using jq::api::NewJob;
using jq::api::OnDuplicate;
using jq::api::PushRequest;
using jq::api::UniqueUntil;
using jq::api::test::Mp;
using namespace std::chrono_literals;

namespace {

using Result = jq::Expected<PushRequest, ApiError>;

Result push_mp(const std::string& bytes) {
  return decode_push(bytes, MediaType::msgpack, {});
}
Result push_json(const std::string& text) {
  return decode_push(text, MediaType::json, {});
}

NewJob one_job(const Result& result) {
  if (!result) FAIL("unexpected error: " << result.error().message);
  REQUIRE(result->jobs.size() == 1);
  CHECK_FALSE(result->batch);
  return result->jobs[0];
}

// A job map with `name` "n" plus one more field whose value `add` packs (or only `name`, when
// that is the field).
template <class Add>
std::string mp_job_with(std::string_view field, Add add) {
  Mp mp;
  if (field == "name") {
    mp.map(1);
  } else {
    mp.map(2).str("name").str("n");
  }
  mp.str(field);
  add(mp);
  return mp.bytes();
}

std::string json_job_with(std::string_view field, std::string_view value) {
  const std::string name = field == "name" ? "" : R"("name":"n",)";
  return "{" + name + "\"" + std::string(field) + "\":" + std::string(value) + "}";
}

void check_error(const Result& result, ErrorCode code, std::optional<std::string> field,
                 std::string_view message_part) {
  REQUIRE_FALSE(result);
  CHECK(result.error().code == code);
  CHECK(result.error().field == field);
  CHECK_THAT(result.error().message, Catch::Contains(std::string(message_part)));
}

std::string repeat(std::string_view text, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += text;
  return out;
}

// One rule broken the same way in JSON and in MessagePack.
struct BadField {
  std::string field;
  std::string json_value;
  std::string msgpack_value;
  std::string message;  // a part of the expected message
};

std::vector<BadField> bad_fields() {
  return {
      {"name", "\"\"", Mp().str(""), "name must be 1-128 bytes"},
      {"name", "\"" + std::string(129, 'a') + "\"", Mp().str(std::string(129, 'a')), "1-128"},
      {"name", "\"a b\"", Mp().str("a b"), "got \"a b\""},
      {"name", "\"caf\xc3\xa9\"", Mp().str("caf\xc3\xa9"), "A-Z a-z 0-9 _ . : -"},
      {"name", "\"a/b\"", Mp().str("a/b"), "name must be"},
      {"name", "\".a\"", Mp().str(".a"), "must not start with"},
      {"name", "\":a\"", Mp().str(":a"), "must not start with"},
      {"name", "\"-a\"", Mp().str("-a"), "must not start with"},
      {"name", "5", Mp().i(5), "name must be a string, got 5"},
      {"priority", "3.5", Mp().f64(3.5),
       "priority must be an integer between -2147483648 and 2147483647, got 3.5"},
      {"priority", "3.0", Mp().f64(3.0), "got 3.0"},
      {"priority", "2147483648", Mp().i(2147483648), "got 2147483648"},
      {"priority", "-2147483649", Mp().i(-2147483649), "got -2147483649"},
      {"priority", "18446744073709551615", Mp().u(std::numeric_limits<std::uint64_t>::max()),
       "got 18446744073709551615"},
      {"priority", "-9223372036854775808", Mp().i(std::numeric_limits<std::int64_t>::min()),
       "got -9223372036854775808"},
      {"priority", "\"1\"", Mp().str("1"), "got \"1\""},
      {"priority", "null", Mp().nil(), "got null"},
      {"max_retry", "-1", Mp().i(-1), "max_retry must be an integer between 0 and 1000, got -1"},
      {"max_retry", "1001", Mp().i(1001), "got 1001"},
      {"max_retry", "1.5", Mp().f32(1.5f), "got 1.5"},
      {"max_retry", "true", Mp().boolean(true), "got true"},
      {"keep_result", "1", Mp().i(1), "keep_result must be true or false, got 1"},
      {"keep_result", "\"true\"", Mp().str("true"), "got \"true\""},
      {"keep_result", "null", Mp().nil(), "got null"},
      {"timeout", "0", Mp().i(0),
       "timeout must be a number of seconds greater than 0 and at most 86400, got 0"},
      {"timeout", "0.0", Mp().f64(0.0), "got 0.0"},
      {"timeout", "-1", Mp().i(-1), "got -1"},
      {"timeout", "86400.5", Mp().f64(86400.5), "got 86400.5"},
      {"timeout", "86401", Mp().i(86401), "got 86401"},
      {"timeout", "\"30\"", Mp().str("30"), "got \"30\""},
      {"timeout", "[30]", Mp().array(1).i(30), "got [30]"},
      {"delay", "-1", Mp().i(-1), "delay must be a number of seconds from 0 to 31536000, got -1"},
      {"delay", "-0.5", Mp().f64(-0.5), "got -0.5"},
      {"delay", "31536000.5", Mp().f64(31536000.5), "got 31536000.5"},
      {"delay", "31536001", Mp().i(31536001), "got 31536001"},
      {"delay", "18446744073709551615", Mp().u(std::numeric_limits<std::uint64_t>::max()),
       "got 18446744073709551615"},
      {"delay", "\"10\"", Mp().str("10"), "got \"10\""},
      {"delay", "null", Mp().nil(), "got null"},
      {"delay", "true", Mp().boolean(true), "got true"},
      {"run_at", "\"2026-12-01T09:00:00\"", Mp().str("2026-12-01T09:00:00"),
       "run_at must be an ISO 8601 time with an offset, such as 2026-12-01T09:00:00Z or "
       "2026-12-01T11:00:00+02:00, got \"2026-12-01T09:00:00\", which has no offset (add Z for "
       "UTC, or +hh:mm)"},
      {"run_at", "\"2026-12-01 09:00:00Z\"", Mp().str("2026-12-01 09:00:00Z"),
       "which does not start with a date and time as YYYY-MM-DDThh:mm:ss"},
      {"run_at", "\"2026-02-30T09:00:00Z\"", Mp().str("2026-02-30T09:00:00Z"),
       "which names a day that does not exist"},
      {"run_at", "\"2026-12-01T24:00:00Z\"", Mp().str("2026-12-01T24:00:00Z"),
       "which names a time of day that does not exist"},
      {"run_at", "\"2026-12-01T09:00:00+0200\"", Mp().str("2026-12-01T09:00:00+0200"),
       "which has an offset that is not Z, +hh:mm or -hh:mm"},
      {"run_at", "\"\"", Mp().str(""), "got \"\", which does not start with a date"},
      {"run_at", "\"tomorrow\"", Mp().str("tomorrow"), "got \"tomorrow\""},
      {"run_at", "1796115600", Mp().i(1796115600),
       "run_at must be an ISO 8601 time with an offset, such as 2026-12-01T09:00:00Z or "
       "2026-12-01T11:00:00+02:00, got 1796115600"},
      {"run_at", "null", Mp().nil(), "got null"},
      {"unique_key", "\"\"", Mp().str(""),
       "unique_key must be a string of 1 to 256 bytes, got \"\""},
      {"unique_key", "\"" + std::string(257, 'k') + "\"", Mp().str(std::string(257, 'k')),
       "unique_key must be a string of 1 to 256 bytes, got a string of 257 bytes"},
      {"unique_key", "\"" + repeat("\xc3\xa9", 129) + "\"", Mp().str(repeat("\xc3\xa9", 129)),
       "got a string of 258 bytes"},
      {"unique_key", "42", Mp().i(42), "got 42"},
      {"unique_key", "null", Mp().nil(), "got null"},
      {"unique_key", "[\"a\"]", Mp().array(1).str("a"), "got [\"a\"]"},
      {"unique_until", "\"start\"", Mp().str("start"),
       "unique_until must be \"started\" or \"finished\", got \"start\""},
      {"unique_until", "\"Finished\"", Mp().str("Finished"), "got \"Finished\""},
      {"unique_until", "\"\"", Mp().str(""), "got \"\""},
      {"unique_until", "true", Mp().boolean(true), "got true"},
      {"unique_until", "null", Mp().nil(), "got null"},
      {"unique_for", "0", Mp().i(0),
       "unique_for must be a number of seconds greater than 0 and at most 31536000, got 0"},
      {"unique_for", "-5", Mp().i(-5), "got -5"},
      {"unique_for", "31536000.5", Mp().f64(31536000.5), "got 31536000.5"},
      {"unique_for", "\"60\"", Mp().str("60"), "got \"60\""},
      {"unique_for", "null", Mp().nil(), "got null"},
      {"ordering_key", "\"\"", Mp().str(""),
       "ordering_key must be a string of 1 to 256 bytes, got \"\""},
      {"ordering_key", "\"" + std::string(257, 'o') + "\"", Mp().str(std::string(257, 'o')),
       "got a string of 257 bytes"},
      {"ordering_key", "7", Mp().i(7), "got 7"},
      {"ordering_key", "{\"k\":1}", Mp().map(1).str("k").i(1), "got {\"k\":1}"},
      {"ordering_key", "null", Mp().nil(), "got null"},
      {"on_duplicate", "\"merge\"", Mp().str("merge"),
       "on_duplicate must be \"keep\", \"replace\" or \"append\", got \"merge\""},
      {"on_duplicate", "\"Replace\"", Mp().str("Replace"), "got \"Replace\""},
      {"on_duplicate", "\"\"", Mp().str(""), "got \"\""},
      {"on_duplicate", "1", Mp().i(1), "got 1"},
      {"on_duplicate", "null", Mp().nil(), "got null"},
  };
}

}  // namespace

TEST_CASE("a job with only a name takes the defaults", "[unit]") {
  const JobDefaults defaults{7, 12'000ms, 600'000ms};
  for (const auto& [body, type] :
       {std::pair<std::string, MediaType>{Mp().map(1).str("name").str("email.send"),
                                          MediaType::msgpack},
        std::pair<std::string, MediaType>{R"({"name":"email.send"})", MediaType::json}}) {
    const auto result = decode_push(body, type, defaults);
    const NewJob job = one_job(result);
    CHECK(job.name == "email.send");
    CHECK(job.argument == std::string("\xc0", 1));
    CHECK(job.priority == 0);
    CHECK(job.max_retry == 7);
    CHECK_FALSE(job.keep_result);
    CHECK(job.timeout == 12'000ms);
    CHECK(job.ready_at.delay == 0ms);
    CHECK_FALSE(job.ready_at.run_at_ms);
    CHECK(job.unique_key.empty());
    CHECK(job.unique_until == UniqueUntil::finished);
    CHECK(job.unique_for == 600'000ms);
    CHECK(job.ordering_key.empty());
    CHECK(job.on_duplicate == OnDuplicate::keep);
    CHECK_FALSE(job.ready_at.given);
  }
}

TEST_CASE("JSON a job cannot hold deep in its argument names the job's field", "[unit]") {
  const auto big =
      decode_push(R"([{"name":"a"},{"name":"a","argument":{"n":[1,99999999999999999999]}}])",
                  MediaType::json, {});
  REQUIRE_FALSE(big);
  CHECK(big.error().field == "argument");  // the argument is the pusher's own: not argument.n[1]
  CHECK(big.error().index == 1u);
  CHECK_THAT(big.error().message, Catch::Contains("at /1/argument/n/1"));
}

TEST_CASE("a unique job without unique_for takes defaults.unique_for", "[unit]") {
  const JobDefaults defaults{3, 30'000ms, 3'600'000ms};
  const auto result = decode_push(R"({"name":"a","unique_key":"k"})", MediaType::json, defaults);
  const NewJob job = one_job(result);
  CHECK(job.unique_key == "k");
  CHECK(job.unique_until == UniqueUntil::finished);
  CHECK(job.unique_for == 3'600'000ms);
}

TEST_CASE("a job with every field keeps every value", "[unit]") {
  // delay and run_at exclude each other: run_at has its own case below.
  // clang-format off
  const std::string mp = Mp()
      .map(12)
          .str("name").str("resize:image_2")
          .str("argument").map(1).str("w").i(640)
          .str("priority").i(-5)
          .str("max_retry").i(0)
          .str("keep_result").boolean(true)
          .str("timeout").f64(2.5)
          .str("delay").f64(90.5)
          .str("unique_key").str("image:42")
          .str("unique_until").str("started")
          .str("unique_for").i(600)
          .str("ordering_key").str("album:7")
          .str("on_duplicate").str("append");
  // clang-format on
  const std::string json =
      R"({"name":"resize:image_2","argument":{"w":640},"priority":-5,"max_retry":0,)"
      R"("keep_result":true,"timeout":2.5,"delay":90.5,"unique_key":"image:42",)"
      R"("unique_until":"started","unique_for":600,"ordering_key":"album:7",)"
      R"("on_duplicate":"append"})";
  for (const auto& result : {push_mp(mp), push_json(json)}) {
    const NewJob job = one_job(result);
    CHECK(job.name == "resize:image_2");
    CHECK(job.argument == Mp().map(1).str("w").i(640).bytes());
    CHECK(job.priority == -5);
    CHECK(job.max_retry == 0);
    CHECK(job.keep_result);
    CHECK(job.timeout == 2500ms);
    CHECK(job.ready_at.delay == 90'500ms);
    CHECK_FALSE(job.ready_at.run_at_ms);
    CHECK(job.unique_key == "image:42");
    CHECK(job.unique_until == UniqueUntil::started);
    CHECK(job.unique_for == 600'000ms);
    CHECK(job.ordering_key == "album:7");
    CHECK(job.on_duplicate == OnDuplicate::append);
    CHECK(job.ready_at.given);
  }
}

TEST_CASE("run_at is kept as milliseconds since the epoch, in both encodings", "[unit]") {
  const auto json = push_json(R"({"name":"a","run_at":"2026-12-01T11:00:00.250+02:00"})");
  const auto mp = push_mp(mp_job_with("run_at", [](Mp& m) { m.str("2026-12-01T09:00:00.25Z"); }));
  for (const auto& result : {json, mp}) {
    const NewJob job = one_job(result);
    CHECK(job.ready_at.run_at_ms == 1796115600250);
    CHECK(job.ready_at.delay == 0ms);
    CHECK(job.ready_at.given);
  }
  // A time in the past is valid: the job is ready at once (the store's decision).
  CHECK(one_job(push_json(R"({"name":"a","run_at":"1970-01-01T00:00:00Z"})")).ready_at.run_at_ms ==
        0);
}

TEST_CASE("delay and run_at together are refused on run_at, whichever comes first", "[unit]") {
  const std::string message =
      "run_at and delay cannot be given together: delay is seconds after the push, run_at a "
      "time; give one of them";
  for (const char* json : {R"({"name":"a","delay":5,"run_at":"2026-12-01T09:00:00Z"})",
                           R"({"name":"a","run_at":"2026-12-01T09:00:00Z","delay":0})"}) {
    INFO(json);
    const auto result = push_json(json);
    check_error(result, ErrorCode::invalid_job, "run_at", message);
    CHECK(result.error().message == message);
  }
  check_error(push_mp(Mp().map(3).str("delay").f64(0.5).str("name").str("a").str("run_at").str(
                  "2026-12-01T09:00:00Z")),
              ErrorCode::invalid_job, "run_at", message);
}

TEST_CASE("unique_until and unique_for without unique_key are refused and named", "[unit]") {
  for (const char* field : {"unique_until", "unique_for"}) {
    const std::string value = std::string(field) == "unique_until" ? R"("started")" : "60";
    const std::string message = std::string(field) +
                                " applies only to a unique job: give unique_key as well, or "
                                "leave " +
                                field + " out";
    const auto result = push_json(json_job_with(field, value));
    check_error(result, ErrorCode::invalid_job, field, message);
    CHECK(result.error().message == message);
    const std::string with_ordering =
        R"({"name":"a","ordering_key":"o",")" + std::string(field) + R"(":)" + value + "}";
    check_error(push_json(with_ordering), ErrorCode::invalid_job, field, message);
  }
  // Both: the first in the table's order is named.
  check_error(push_json(R"({"name":"a","unique_for":60,"unique_until":"finished"})"),
              ErrorCode::invalid_job, "unique_until", "applies only to a unique job");
  // With unique_key both are fine, in any order.
  const NewJob job = one_job(
      push_json(R"({"unique_for":0.5,"unique_until":"finished","name":"a","unique_key":"k"})"));
  CHECK(job.unique_for == 500ms);
  CHECK(job.unique_until == UniqueUntil::finished);
}

TEST_CASE("a rule between fields names the index of the job in a batch", "[unit]") {
  const auto result =
      push_json(R"([{"name":"a","delay":1},{"name":"a","unique_key":"k","unique_until":"started"},)"
                R"({"name":"a","unique_until":"started"}])");
  check_error(result, ErrorCode::invalid_job, "unique_until",
              "job 2: unique_until applies only to a unique job");
  CHECK(result.error().index == 2u);
}

TEST_CASE("delay, unique_for and the keys accept their limits", "[unit]") {
  const auto job = [](std::string_view field, std::string_view value) {
    return one_job(push_json(json_job_with(field, value)));
  };
  CHECK(job("delay", "0").ready_at.delay == 0ms);
  CHECK(job("delay", "0").ready_at.given);  // a replace takes it as "ready now"
  CHECK(job("delay", "0.0").ready_at.delay == 0ms);
  CHECK(job("delay", "-0.0").ready_at.delay == 0ms);
  CHECK(job("delay", "31536000").ready_at.delay == 31'536'000'000ms);
  CHECK(job("delay", "31536000.0").ready_at.delay == 31'536'000'000ms);
  CHECK(one_job(push_mp(mp_job_with("delay", [](Mp& m) { m.u(31536000); }))).ready_at.delay ==
        31'536'000'000ms);
  const auto unique = [](std::string_view value) {
    return one_job(
        push_json(R"({"name":"a","unique_key":"k","unique_for":)" + std::string(value) + "}"));
  };
  CHECK(unique("31536000").unique_for == 31'536'000'000ms);
  CHECK(unique("0.0001").unique_for == 1ms);
  CHECK(job("unique_key", R"("k")").unique_key == "k");
  CHECK(job("unique_key", "\"" + std::string(256, 'k') + "\"").unique_key.size() == 256);
  CHECK(job("unique_key", "\"" + repeat("\xc3\xa9", 128) + "\"").unique_key.size() == 256);
  CHECK(job("ordering_key", R"(" ")").ordering_key == " ");
  CHECK(job("ordering_key", "\"" + std::string(256, 'o') + "\"").ordering_key.size() == 256);
  CHECK(job("unique_key", R"("tenant/7 \u00e9")").unique_key == "tenant/7 \xc3\xa9");
}

TEST_CASE("delays in fractions of a second round up to the next millisecond", "[unit]") {
  const auto delay_json = [](std::string_view value) {
    return one_job(push_json(json_job_with("delay", value))).ready_at.delay;
  };
  CHECK(delay_json("0.0001") == 1ms);
  CHECK(delay_json("1e-9") == 1ms);
  CHECK(delay_json("1.1") == 1100ms);
  CHECK(delay_json("0.0015") == 2ms);
  CHECK(delay_json("2.5") == 2500ms);
  CHECK(one_job(push_mp(mp_job_with("delay", [](Mp& m) { m.f32(0.25f); }))).ready_at.delay ==
        250ms);
}

TEST_CASE("a NaN or infinite delay or unique_for is rejected and shown as such", "[unit]") {
  check_error(push_mp(mp_job_with("delay", [](Mp& m) { m.f64(std::nan("")); })),
              ErrorCode::invalid_job, "delay", "got NaN");
  check_error(push_mp(mp_job_with("delay", [](Mp& m) { m.f64(INFINITY); })), ErrorCode::invalid_job,
              "delay", "got Infinity");
  check_error(push_mp(mp_job_with("unique_for", [](Mp& m) { m.f64(std::nan("")); })),
              ErrorCode::invalid_job, "unique_for", "got NaN");
}

TEST_CASE("every rule of the job table rejects a bad value in both encodings", "[unit]") {
  for (const BadField& bad : bad_fields()) {
    INFO(bad.field << " = " << bad.json_value);
    check_error(push_json(json_job_with(bad.field, bad.json_value)), ErrorCode::invalid_job,
                bad.field, bad.message);
    check_error(push_mp(mp_job_with(bad.field, [&](Mp& m) { m.raw(bad.msgpack_value); })),
                ErrorCode::invalid_job, bad.field, bad.message);
  }
}

TEST_CASE("a bad name in the name field itself is reported", "[unit]") {
  check_error(push_json(R"({"name":".x"})"), ErrorCode::invalid_job, "name",
              "name must be 1-128 bytes of A-Z a-z 0-9 _ . : - and must not start with '.', "
              "':' or '-', got \".x\"");
}

TEST_CASE("a job without a name is rejected in both encodings", "[unit]") {
  check_error(push_json(R"({"priority":1})"), ErrorCode::invalid_job, "name", "name is required");
  check_error(push_mp(Mp().map(1).str("priority").i(1)), ErrorCode::invalid_job, "name",
              "name is required");
  check_error(push_json("{}"), ErrorCode::invalid_job, "name", "name is required");
}

TEST_CASE("an unknown field is rejected and named", "[unit]") {
  const std::string message =
      "unknown field \"max_retries\": allowed fields are name, argument, priority, max_retry, "
      "keep_result, timeout, delay, run_at, unique_key, unique_until, unique_for, ordering_key, "
      "on_duplicate";
  const auto json = push_json(R"({"name":"a","max_retries":3})");
  check_error(json, ErrorCode::invalid_job, "max_retries", message);
  CHECK(json.error().message == message);
  check_error(push_mp(mp_job_with("max_retries", [](Mp& m) { m.i(3); })), ErrorCode::invalid_job,
              "max_retries", message);
}

TEST_CASE("on_duplicate takes keep, replace or append, and merging makes the claim end at start",
          "[unit]") {
  const auto job = [](std::string_view fields) {
    return one_job(push_json(R"({"name":"a","unique_key":"k",)" + std::string(fields) + "}"));
  };
  CHECK(job(R"("on_duplicate":"keep")").on_duplicate == OnDuplicate::keep);
  CHECK(job(R"("on_duplicate":"keep")").unique_until == UniqueUntil::finished);
  for (const char* mode : {"replace", "append"}) {
    INFO(mode);
    const std::string given = R"("on_duplicate":")" + std::string(mode) + "\"";
    const NewJob merging = job(given);
    CHECK(merging.on_duplicate ==
          (std::string(mode) == "replace" ? OnDuplicate::replace : OnDuplicate::append));
    CHECK(merging.unique_until == UniqueUntil::started);
    CHECK(job(given + R"(,"unique_until":"started")").unique_until == UniqueUntil::started);
  }
  CHECK(one_job(push_mp(Mp().map(3)
                            .str("name")
                            .str("a")
                            .str("unique_key")
                            .str("k")
                            .str("on_duplicate")
                            .str("replace")))
            .on_duplicate == OnDuplicate::replace);
}

TEST_CASE("on_duplicate needs unique_key, and merging refuses unique_until finished", "[unit]") {
  const std::string alone =
      "on_duplicate applies only to a unique job: give unique_key as well, or leave on_duplicate "
      "out";
  for (const char* mode : {"keep", "replace", "append"}) {
    INFO(mode);
    const auto result =
        push_json(R"({"name":"a","ordering_key":"o","on_duplicate":")" + std::string(mode) + "\"}");
    check_error(result, ErrorCode::invalid_job, "on_duplicate", alone);
    CHECK(result.error().message == alone);
  }
  for (const char* mode : {"replace", "append"}) {
    INFO(mode);
    // In either order of the fields, in both encodings.
    check_error(push_json(R"({"name":"a","unique_key":"k","unique_until":"finished",)"
                          R"("on_duplicate":")" +
                          std::string(mode) + "\"}"),
                ErrorCode::invalid_job, "unique_until",
                "unique_until \"finished\" cannot go with on_duplicate \"replace\" or "
                "\"append\"");
    check_error(push_mp(Mp().map(4)
                            .str("on_duplicate")
                            .str(mode)
                            .str("unique_until")
                            .str("finished")
                            .str("name")
                            .str("a")
                            .str("unique_key")
                            .str("k")),
                ErrorCode::invalid_job, "unique_until", "cannot go with on_duplicate");
  }
  // keep goes with either.
  CHECK(one_job(push_json(R"({"name":"a","unique_key":"k","unique_until":"finished",)"
                          R"("on_duplicate":"keep"})"))
            .unique_until == UniqueUntil::finished);
  // In a batch, the job's index is named.
  const auto batch = push_json(R"([{"name":"a"},{"name":"a","on_duplicate":"append"}])");
  check_error(batch, ErrorCode::invalid_job, "on_duplicate", "job 1: on_duplicate applies only");
  CHECK(batch.error().index == 1u);
}

TEST_CASE("a field name that is not a string is a bad request", "[unit]") {
  check_error(push_mp(Mp().map(2).str("name").str("a").i(1).str("x")), ErrorCode::bad_request,
              std::nullopt, "field names must be strings, got 1");
}

TEST_CASE("a field given twice is rejected", "[unit]") {
  check_error(push_mp(Mp().map(2).str("name").str("a").str("name").str("b")),
              ErrorCode::invalid_job, "name", "name appears more than once");
}

TEST_CASE("integer limits of priority, max_retry and timeout are inclusive", "[unit]") {
  const auto job_mp = [](std::string_view field, const std::string& value) {
    return one_job(push_mp(mp_job_with(field, [&](Mp& m) { m.raw(value); })));
  };
  const auto job_json = [](std::string_view field, std::string_view value) {
    return one_job(push_json(json_job_with(field, value)));
  };
  CHECK(job_mp("priority", Mp().i(-2147483648)).priority == -2147483648);
  CHECK(job_mp("priority", Mp().i(2147483647)).priority == 2147483647);
  CHECK(job_mp("priority", Mp().raw(std::string("\xd3\0\0\0\0\0\0\0\x05", 9))).priority == 5);
  CHECK(job_mp("priority", Mp().raw(std::string("\xcf\0\0\0\0\0\0\0\x05", 9))).priority == 5);
  CHECK(job_json("priority", "-2147483648").priority == -2147483648);
  CHECK(job_json("priority", "2147483647").priority == 2147483647);
  CHECK(job_mp("max_retry", Mp().i(1000)).max_retry == 1000);
  CHECK(job_json("max_retry", "0").max_retry == 0);
  CHECK(job_mp("timeout", Mp().i(86400)).timeout == 86'400'000ms);
  CHECK(job_json("timeout", "86400").timeout == 86'400'000ms);
  CHECK(job_json("timeout", "86400.0").timeout == 86'400'000ms);
}

TEST_CASE("timeouts in fractions of a second round up to the next millisecond", "[unit]") {
  const auto timeout_json = [](std::string_view value) {
    return one_job(push_json(json_job_with("timeout", value))).timeout;
  };
  CHECK(timeout_json("0.0001") == 1ms);
  CHECK(timeout_json("0.0015") == 2ms);
  CHECK(timeout_json("1.1") == 1100ms);
  CHECK(timeout_json("0.5") == 500ms);
  CHECK(timeout_json("30") == 30'000ms);
  CHECK(timeout_json("1e-9") == 1ms);
  CHECK(one_job(push_mp(mp_job_with("timeout", [](Mp& m) { m.f32(0.25f); }))).timeout == 250ms);
  CHECK(one_job(push_mp(mp_job_with("timeout", [](Mp& m) { m.i32(3); }))).timeout == 3000ms);
}

TEST_CASE("a NaN or infinite timeout is rejected and shown as such", "[unit]") {
  check_error(push_mp(mp_job_with("timeout", [](Mp& m) { m.f64(std::nan("")); })),
              ErrorCode::invalid_job, "timeout", "got NaN");
  check_error(push_mp(mp_job_with("timeout", [](Mp& m) { m.f64(INFINITY); })),
              ErrorCode::invalid_job, "timeout", "got Infinity");
}

TEST_CASE("names of 1 and 128 bytes of every allowed character are valid", "[unit]") {
  CHECK(is_valid_job_name("a"));
  CHECK(is_valid_job_name("_"));
  CHECK(is_valid_job_name("9"));
  CHECK(is_valid_job_name("AZaz09_.:-"));
  CHECK(is_valid_job_name(std::string(128, 'x')));
  CHECK_FALSE(is_valid_job_name(std::string(129, 'x')));
  CHECK_FALSE(is_valid_job_name(""));
  CHECK_FALSE(is_valid_job_name("*"));
  CHECK_FALSE(is_valid_job_name(std::string("a\0b", 3)));
  CHECK(one_job(push_json(R"({"name":")" + std::string(128, 'x') + "\"}")).name.size() == 128);
}

TEST_CASE("the argument is kept byte for byte, however it was encoded", "[unit]") {
  const std::string arguments[] = {
      Mp().i32(5),                                          // int32 that fits a fixint
      Mp().raw(std::string("\xdf\0\0\0\x01\xa1k\xc0", 8)),  // map32 holding one pair
      Mp().raw(std::string("\xd9\x01x", 3)),                // str8 of one byte
      Mp().bin(std::string("\0\xff\x10", 3)),
      Mp().ext(-1, std::string("\0\0\0\0", 4)),  // fixext 4 (a timestamp)
      Mp().ext(42, std::string(300, 'e')),       // ext 16
      Mp().u(std::numeric_limits<std::uint64_t>::max()),
      Mp().i(std::numeric_limits<std::int64_t>::min()),
      Mp().f32(3.0f),
      Mp().f64(std::nan("")),
      Mp().map(2).i(1).array(2).nil().bin("b").str("k").map(1).str("z").boolean(false),
      Mp().nil(),
  };
  for (const std::string& argument : arguments) {
    const auto job = one_job(push_mp(mp_job_with("argument", [&](Mp& m) { m.raw(argument); })));
    CHECK(job.argument == argument);
  }
}

TEST_CASE("a JSON argument becomes MessagePack with its key order kept", "[unit]") {
  const auto job =
      one_job(push_json(R"({"name":"a","argument":{"b":1,"a":[-1,2.5,"x",null,true]}})"));
  // clang-format off
  CHECK(job.argument == Mp()
      .map(2)
          .str("b").i(1)
          .str("a").array(5).i(-1).f32(2.5f).str("x").nil().boolean(true).bytes());
  // clang-format on
}

TEST_CASE("an absent argument is nil", "[unit]") {
  CHECK(one_job(push_json(R"({"name":"a"})")).argument == std::string("\xc0", 1));
  CHECK(one_job(push_json(R"({"name":"a","argument":null})")).argument == std::string("\xc0", 1));
}

TEST_CASE("an argument nested up to the depth limit is accepted, deeper is not", "[unit]") {
  // The job map is one level, so the argument may hold 63 more.
  const std::string ok_json =
      R"({"name":"a","argument":)" + std::string(63, '[') + std::string(63, ']') + "}";
  CHECK(push_json(ok_json));
  const std::string deep_json =
      R"({"name":"a","argument":)" + std::string(64, '[') + std::string(64, ']') + "}";
  check_error(push_json(deep_json), ErrorCode::bad_request, std::nullopt, "deeper than 64");
  const std::string ok_mp =
      Mp().map(2).str("name").str("a").str("argument").raw(std::string(62, '\x91') + "\x90");
  CHECK(push_mp(ok_mp));
  const std::string deep_mp =
      Mp().map(2).str("name").str("a").str("argument").raw(std::string(63, '\x91') + "\x90");
  check_error(push_mp(deep_mp), ErrorCode::bad_request, std::nullopt, "deeper than 64");
}

TEST_CASE("100000 nested arrays are a bad request, not a crash", "[unit]") {
  const std::string mp = std::string(100000, '\x91') + std::string(1, '\xc0');
  check_error(push_mp(mp), ErrorCode::bad_request, std::nullopt, "not valid MessagePack");
  const std::string json = std::string(100000, '[') + std::string(100000, ']');
  check_error(push_json(json), ErrorCode::bad_request, std::nullopt, "not valid JSON");
  const std::string arg =
      R"({"name":"a","argument":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
  check_error(push_json(arg), ErrorCode::bad_request, std::nullopt, "not valid JSON");
}

TEST_CASE("a body that is not MessagePack or JSON is a bad request", "[unit]") {
  check_error(push_mp(""), ErrorCode::bad_request, std::nullopt,
              "body is not valid MessagePack: it is empty");
  check_error(push_mp(std::string("\xc1")), ErrorCode::bad_request, std::nullopt,
              "body is not valid MessagePack");
  check_error(push_mp(R"({"name":"a"})"), ErrorCode::bad_request, std::nullopt,
              "body is not valid MessagePack");
  check_error(push_json(""), ErrorCode::bad_request, std::nullopt, "body is not valid JSON");
  check_error(push_json("{\"name\":"), ErrorCode::bad_request, std::nullopt,
              "body is not valid JSON: parse error at line 1");
  check_error(push_json("{\"name\":\"a\"} x"), ErrorCode::bad_request, std::nullopt,
              "body is not valid JSON");
  check_error(push_json("{\"name\":\"\xff\"}"), ErrorCode::bad_request, std::nullopt,
              "body is not valid JSON");
  // Named like an integer out of range (it was a parse error without a field).
  check_error(push_json(R"({"name":"a","timeout":1e400})"), ErrorCode::bad_request, "timeout",
              "body is not valid JSON: at /timeout: 1e400 is outside the range");
}

TEST_CASE("truncated MessagePack jobs are a bad request at every cut", "[unit]") {
  const std::string whole =
      Mp().map(3).str("name").str("a").str("argument").bin("xyz").str("priority").i(-300);
  REQUIRE(push_mp(whole));
  for (std::size_t cut = 0; cut < whole.size(); ++cut) {
    check_error(push_mp(whole.substr(0, cut)), ErrorCode::bad_request, std::nullopt,
                "not valid MessagePack");
  }
}

TEST_CASE("bytes after the one top-level value are a bad request", "[unit]") {
  const std::string job = Mp().map(1).str("name").str("a");
  check_error(push_mp(job + job), ErrorCode::bad_request, std::nullopt,
              "unexpected bytes after the value");
  check_error(push_mp(job + std::string("\0", 1)), ErrorCode::bad_request, std::nullopt,
              "1 unexpected bytes");
}

TEST_CASE("a top level that is neither a map nor an array is a bad request", "[unit]") {
  check_error(push_json("\"job\""), ErrorCode::bad_request, std::nullopt,
              "body must be a job (a map) or an array of 1 to 1000 jobs, got \"job\"");
  check_error(push_json("null"), ErrorCode::bad_request, std::nullopt, "got null");
  check_error(push_mp(Mp().i(5)), ErrorCode::bad_request, std::nullopt, "got 5");
  check_error(push_mp(Mp().bin("x")), ErrorCode::bad_request, std::nullopt,
              "got binary data (1 bytes)");
}

TEST_CASE("an array of jobs is a batch, even of one job", "[unit]") {
  for (const auto& result :
       {push_json(R"([{"name":"a"}])"), push_mp(Mp().array(1).map(1).str("name").str("a"))}) {
    REQUIRE(result);
    CHECK(result->batch);
    REQUIRE(result->jobs.size() == 1);
    CHECK(result->jobs[0].name == "a");
  }
}

TEST_CASE("a batch of 1000 jobs keeps their order", "[unit]") {
  Mp mp;
  mp.array(1000);
  std::string json = "[";
  for (int i = 0; i < 1000; ++i) {
    mp.map(2).str("name").str("n").str("priority").i(i);
    json += (i ? "," : "") + std::string(R"({"name":"n","priority":)") + std::to_string(i) + "}";
  }
  json += "]";
  for (const auto& result : {push_mp(mp), push_json(json)}) {
    REQUIRE(result);
    CHECK(result->batch);
    REQUIRE(result->jobs.size() == 1000);
    for (int i = 0; i < 1000; ++i) CHECK(result->jobs[static_cast<std::size_t>(i)].priority == i);
  }
}

TEST_CASE("a batch of 1001 jobs is a bad request", "[unit]") {
  Mp mp;
  mp.array(1001);
  std::string json = "[";
  for (int i = 0; i < 1001; ++i) {
    mp.map(1).str("name").str("n");
    json += (i ? "," : "") + std::string(R"({"name":"n"})");
  }
  json += "]";
  for (const auto& result : {push_mp(mp), push_json(json)}) {
    check_error(result, ErrorCode::bad_request, std::nullopt,
                "the batch has 1001 jobs: at most 1000");
    CHECK_FALSE(result.error().index);
  }
}

TEST_CASE("an empty batch is a bad request", "[unit]") {
  check_error(push_json("[]"), ErrorCode::bad_request, std::nullopt, "the batch is empty");
  check_error(push_mp(Mp().array(0)), ErrorCode::bad_request, std::nullopt, "the batch is empty");
}

TEST_CASE("a batch with one bad job reports its index and field", "[unit]") {
  Mp mp;
  mp.array(8);
  std::string json = "[";
  for (int i = 0; i < 8; ++i) {
    const bool bad = i == 5;
    mp.map(2).str("name").str("n").str("priority");
    bad ? mp.f64(1.5) : mp.i(i);
    json += (i ? "," : "") + std::string(R"({"name":"n","priority":)") +
            (bad ? "1.5" : std::to_string(i)) + "}";
  }
  json += "]";
  for (const auto& result : {push_mp(mp), push_json(json)}) {
    check_error(result, ErrorCode::invalid_job, "priority",
                "job 5: priority must be an integer between -2147483648 and 2147483647, got 1.5");
    CHECK(result.error().index == 5u);
  }
}

TEST_CASE("a batch element that is not a map reports its index", "[unit]") {
  const auto result = push_json(R"([{"name":"a"},{"name":"b"},7])");
  check_error(result, ErrorCode::bad_request, std::nullopt, "job 2: a job must be a map");
  CHECK(result.error().index == 2u);
  const auto nested = push_json(R"([[{"name":"a"}]])");
  check_error(nested, ErrorCode::bad_request, std::nullopt, "a job must be a map, got [{");
  CHECK(nested.error().index == 0u);
}

TEST_CASE("garbage and mutated job bodies never crash the decoder", "[unit]") {
  std::mt19937 rng(777);
  std::uniform_int_distribution<int> byte(0, 255);
  // clang-format off
  const std::string base = Mp()
      .array(2)
          .map(3).str("name").str("a").str("argument").ext(3, "xy").str("timeout").f32(1.5f)
          .map(2).str("name").str("b").str("priority").i(-70000);
  // clang-format on
  const std::string json_base = R"([{"name":"a","argument":{"k":[1,2]},"timeout":1.5}])";
  for (int round = 0; round < 20000; ++round) {
    std::string bytes = round % 2 ? base : json_base;
    for (int flips = 0; flips < 1 + round % 4; ++flips) {
      bytes[static_cast<std::size_t>(byte(rng)) % bytes.size()] = static_cast<char>(byte(rng));
    }
    const auto result = decode_push(bytes, round % 2 ? MediaType::msgpack : MediaType::json, {});
    if (!result) CHECK_FALSE(result.error().message.empty());
  }
}

TEST_CASE("a JSON job with a repeated key is a bad request", "[unit]") {
  check_error(push_json(R"({"name":"a","priority":1,"priority":2})"), ErrorCode::bad_request,
              "priority", "the key \"priority\" appears twice");
}
