#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "api/job_result.hpp"
#include "api_test_msgpack.hpp"

using jq::api::decode_job_result;
using jq::api::encode_failure;
using jq::api::FailureReason;
using jq::api::JobResult;
using jq::api::MediaType;
using jq::api::ResultType;
using jq::api::test::Mp;

namespace {

using Result = jq::Expected<JobResult, std::string>;

Result decode_json(const std::string& text) {
  return decode_job_result(text, MediaType::json);
}

Result decode_mp(const std::string& bytes) {
  return decode_job_result(bytes, MediaType::msgpack);
}

void check_error(const Result& result, std::string_view message_part) {
  REQUIRE_FALSE(result);
  CHECK_THAT(result.error(), Catch::Contains(std::string(message_part)));
}

}  // namespace

TEST_CASE("a success keeps the worker's bytes exactly", "[unit]") {
  // clang-format off
  const std::string body = Mp()
      .map(3)
          .str("type").str("success")
          .str("finished_at").str("2026-01-01T00:00:00Z")
          .str("result").array(2).i32(1).bin("x");
  // clang-format on
  const auto result = decode_mp(body);
  REQUIRE(result);
  CHECK(result->type == ResultType::success);
  CHECK(result->encoded == body);
  CHECK(result->message.empty());
}

TEST_CASE("a success without a result is valid", "[unit]") {
  const auto result = decode_json(R"({"type":"success","finished_at":"2026-01-01T00:00:00Z"})");
  REQUIRE(result);
  CHECK(result->type == ResultType::success);
}

TEST_CASE("a JSON answer is stored as its MessagePack conversion", "[unit]") {
  const auto result = decode_json(
      R"({"type":"success","finished_at":"2026-01-01T00:00:00Z","result":{"n":1},"worker":"w1"})");
  REQUIRE(result);
  // clang-format off
  CHECK(result->encoded == Mp()
      .map(4)
          .str("type").str("success")
          .str("finished_at").str("2026-01-01T00:00:00Z")
          .str("result").map(1).str("n").i(1)
          .str("worker").str("w1").bytes());
  // clang-format on
}

TEST_CASE("a failure carries its reason, retry flag and message", "[unit]") {
  const auto result = decode_json(
      R"({"type":"failure","reason":"timeout","finished_at":"2026-01-01T00:00:00Z","should_retry":true,)"
      R"("error":{"code":7},"message":"db down"})");
  REQUIRE(result);
  CHECK(result->type == ResultType::failure);
  CHECK(result->reason == FailureReason::timeout);
  CHECK(result->should_retry);
  CHECK(result->message == "db down");
}

TEST_CASE("a failure's reason defaults to other and its message to empty", "[unit]") {
  const auto result = decode_json(
      R"({"type":"failure","finished_at":"2026-01-01T00:00:00Z","should_retry":false})");
  REQUIRE(result);
  CHECK(result->reason == FailureReason::other);
  CHECK_FALSE(result->should_retry);
  CHECK(result->message.empty());
  const auto nil_fields = decode_json(
      R"({"type":"failure","finished_at":"2026-01-01T00:00:00Z","should_retry":true,"reason":null,"message":null})");
  REQUIRE(nil_fields);
  CHECK(nil_fields->reason == FailureReason::other);
  CHECK(nil_fields->message.empty());
}

TEST_CASE("unknown keys in a result are allowed and kept", "[unit]") {
  const std::string body = Mp().map(3)
                               .str("type")
                               .str("success")
                               .str("finished_at")
                               .str("2026-01-01T00:00:00Z")
                               .str("duration_ms")
                               .i(12);
  const auto result = decode_mp(body);
  REQUIRE(result);
  CHECK(result->encoded == body);
}

TEST_CASE("a result with a wrong type says which types are allowed", "[unit]") {
  check_error(decode_json(R"({"type":"ok","finished_at":"2026-01-01T00:00:00Z"})"),
              "result.type must be \"success\" or \"failure\", got \"ok\"");
  check_error(decode_json(R"({"type":1,"finished_at":"2026-01-01T00:00:00Z"})"), "got 1");
  check_error(decode_json(R"({"finished_at":"2026-01-01T00:00:00Z"})"), "result.type is required");
}

TEST_CASE("finished_at must be a time that starts with an ISO 8601 date", "[unit]") {
  check_error(decode_json(R"({"type":"success"})"), "result.finished_at is required");
  for (const char* bad : {"", "t", "yesterday", "2026-13-01T00:00:00Z", "2026-01-00T00:00:00Z",
                          "26-01-01T00:00:00Z", "1767225600"}) {
    check_error(decode_json(R"({"type":"success","finished_at":")" + std::string(bad) + "\"}"),
                "result.finished_at must be an ISO 8601 date and time");
  }
  check_error(decode_json(R"({"type":"success","finished_at":12})"), "got 12");
  check_error(
      decode_json(R"({"type":"success","finished_at":"2026-01-01T)" + std::string(60, '0') + "\"}"),
      "at most 64 bytes");
  // Each language's own way of writing the time after the date is taken as it is.
  for (const char* good :
       {"2026-01-01T00:00:00Z", "2026-01-01T00:00:00.123456", "2026-01-01 00:00:00 +0000",
        "2026-01-01T09:00:00+02:00[Europe/Berlin]", "2026-01-01T09:00Z", "2026-01-01"}) {
    INFO(good);
    CHECK(decode_json(R"({"type":"success","finished_at":")" + std::string(good) + "\"}"));
  }
}

TEST_CASE("a failure needs a boolean should_retry and a known reason", "[unit]") {
  check_error(decode_json(R"({"type":"failure","finished_at":"2026-01-01T00:00:00Z"})"),
              "result.should_retry is required for a failure");
  check_error(
      decode_json(
          R"({"type":"failure","finished_at":"2026-01-01T00:00:00Z","should_retry":"yes"})"),
      "result.should_retry must be true or false, got \"yes\"");
  check_error(
      decode_json(R"({"type":"failure","finished_at":"2026-01-01T00:00:00Z","should_retry":true,)"
                  R"("reason":"crash"})"),
      "result.reason must be \"other\" or \"timeout\", got \"crash\"");
  check_error(
      decode_json(R"({"type":"failure","finished_at":"2026-01-01T00:00:00Z","should_retry":true,)"
                  R"("message":5})"),
      "result.message must be a string, got 5");
}

TEST_CASE("a result body that is not a valid map says so", "[unit]") {
  check_error(decode_mp("not msgpack at all"), "result body is not valid MessagePack");
  check_error(decode_mp(std::string("\xc1", 1)), "result body is not valid MessagePack");
  check_error(decode_mp(""), "result body is not valid MessagePack");
  check_error(decode_json("{"), "result body is not valid JSON");
  check_error(decode_json("[1]"), "the result body must be a map, got [1]");
  check_error(decode_mp(Mp().map(1).i(1).i(2)), "field names must be strings");
  check_error(decode_mp(Mp().map(2).str("type").str("success").str("type").str("failure")),
              "result.type appears more than once");
}

TEST_CASE("the master's failure object has every field a worker's has", "[unit]") {
  const std::string bytes =
      encode_failure(FailureReason::timeout, true, "no answer within 30 s", "2026-01-01T00:00:30Z");
  const auto parsed = nlohmann::json::from_msgpack(bytes);
  CHECK(parsed == nlohmann::json{{"type", "failure"},
                                 {"reason", "timeout"},
                                 {"finished_at", "2026-01-01T00:00:30Z"},
                                 {"should_retry", true},
                                 {"error", nullptr},
                                 {"message", "no answer within 30 s"}});
  const auto decoded = decode_mp(bytes);
  REQUIRE(decoded);
  CHECK(decoded->type == ResultType::failure);
  CHECK(decoded->reason == FailureReason::timeout);
  CHECK(decoded->should_retry);
  CHECK(decoded->message == "no answer within 30 s");
  CHECK(decoded->encoded == bytes);
  CHECK(
      decode_mp(encode_failure(FailureReason::other, false, "", "2026-01-01T00:00:00Z"))->reason ==
      FailureReason::other);
}
