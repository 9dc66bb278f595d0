#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "api/base64.hpp"
#include "api/body.hpp"
#include "api/error.hpp"
#include "api/msgpack_reader.hpp"
#include "api_test_msgpack.hpp"

using jq::api::ApiError;
using jq::api::base64_encode;
using jq::api::encode_body;
using jq::api::encode_error;
using jq::api::ErrorCode;
using jq::api::json_to_msgpack;
using jq::api::MediaType;
using jq::api::msgpack_to_json;
using jq::api::raw_msgpack;
using jq::api::test::Mp;
using nlohmann::json;

namespace {

json binary(std::string_view bytes) {
  return json::binary(json::binary_t::container_type(bytes.begin(), bytes.end()));
}

json to_json(const std::string& msgpack) {
  auto converted = msgpack_to_json(msgpack);
  if (!converted) FAIL(converted.error().message);
  return *converted;
}

}  // namespace

TEST_CASE("every error code has its wire name and HTTP status", "[unit]") {
  const std::tuple<ErrorCode, std::string_view, int> table[] = {
      {ErrorCode::bad_request, "bad_request", 400},
      {ErrorCode::invalid_job, "invalid_job", 400},
      {ErrorCode::unauthorized, "unauthorized", 401},
      {ErrorCode::forbidden, "forbidden", 403},
      {ErrorCode::not_found, "not_found", 404},
      {ErrorCode::conflict, "conflict", 409},
      {ErrorCode::payload_too_large, "payload_too_large", 413},
      {ErrorCode::unsupported_media_type, "unsupported_media_type", 415},
      {ErrorCode::unavailable, "unavailable", 503},
      {ErrorCode::internal, "internal", 500},
  };
  for (const auto& [code, name, status] : table) {
    CHECK(jq::api::to_string(code) == name);
    CHECK(jq::api::http_status(code) == status);
  }
}

TEST_CASE("base64 follows RFC 4648 with padding", "[unit]") {
  CHECK(base64_encode("") == "");
  CHECK(base64_encode("f") == "Zg==");
  CHECK(base64_encode("fo") == "Zm8=");
  CHECK(base64_encode("foo") == "Zm9v");
  CHECK(base64_encode("foob") == "Zm9vYg==");
  CHECK(base64_encode("fooba") == "Zm9vYmE=");
  CHECK(base64_encode("foobar") == "Zm9vYmFy");
  CHECK(base64_encode(std::string("\xfb\xff\xbf", 3)) == "+/+/");
}

TEST_CASE("a response value is written as MessagePack with exact types", "[unit]") {
  const json value = {{"a", 1},
                      {"b", {true, nullptr, -5, 2.5, 3.0, "s"}},
                      {"u", std::numeric_limits<std::uint64_t>::max()},
                      {"i", std::numeric_limits<std::int64_t>::min()},
                      {"o", json::object()}};
  // nlohmann::json keeps object keys sorted.
  // clang-format off
  const std::string expected = Mp()
      .map(5)
          .str("a").i(1)
          .str("b").array(6).boolean(true).nil().i(-5).f64(2.5).f64(3.0).str("s")
          .str("i").i(std::numeric_limits<std::int64_t>::min())
          .str("o").map(0)
          .str("u").u(std::numeric_limits<std::uint64_t>::max());
  // clang-format on
  CHECK(encode_body(value, MediaType::msgpack) == expected);
}

TEST_CASE("a single push's answer is written as encode_body writes the same value", "[unit]") {
  // Short and long ids (a long one takes str8 in MessagePack), each flag on and off.
  for (const std::string& id : {std::string("3-00000001a"), std::string(40, 'z')}) {
    for (const bool duplicate : {false, true}) {
      for (const bool merged : {false, true}) {
        nlohmann::json value = {{"id", id}};
        if (duplicate) value["duplicate"] = true;
        if (merged) value["merged"] = true;
        for (const MediaType type : {MediaType::json, MediaType::msgpack}) {
          INFO(value.dump() << (type == MediaType::json ? " as JSON" : " as MessagePack"));
          CHECK(jq::api::encode_push_answer(id, duplicate, merged, type) ==
                encode_body(value, type));
        }
      }
    }
  }
}

TEST_CASE("a response value is written as compact JSON", "[unit]") {
  const json value = {{"id", "abc"}, {"n", {1, 2.5, nullptr}}};
  CHECK(encode_body(value, MediaType::json) == R"({"id":"abc","n":[1,2.5,null]})");
  CHECK(encode_body(nullptr, MediaType::json) == "null");
  CHECK(encode_body(nullptr, MediaType::msgpack) == std::string("\xc0", 1));
}

TEST_CASE("binary values are bin in MessagePack and $bin in JSON", "[unit]") {
  const json value = {{"data", binary(std::string("\0\1\2", 3))}};
  CHECK(encode_body(value, MediaType::msgpack) ==
        Mp().map(1).str("data").bin(std::string("\0\1\2", 3)).bytes());
  CHECK(encode_body(value, MediaType::json) == R"({"data":{"$bin":"AAEC"}})");
}

TEST_CASE("raw MessagePack is spliced in verbatim", "[unit]") {
  const std::string argument = Mp().raw(std::string("\xd2\0\0\0\x05", 5));  // int32 5
  const std::string result =
      Mp().map(2).str("k").ext(9, "xyz").str("f").f32(1.5f);  // ext and float32 kept as is
  const json value = {{"argument", raw_msgpack(argument)}, {"result", raw_msgpack(result)}};
  CHECK(encode_body(value, MediaType::msgpack) ==
        Mp().map(2).str("argument").raw(argument).str("result").raw(result).bytes());
  CHECK(encode_body(raw_msgpack(result), MediaType::msgpack) == result);
}

TEST_CASE("raw MessagePack is converted in JSON output", "[unit]") {
  const std::string argument = Mp().map(2).str("k").bin(std::string("\1\2", 2)).str("n").i32(5);
  const json value = {{"argument", raw_msgpack(argument)}, {"list", {raw_msgpack(Mp().nil())}}};
  CHECK(encode_body(value, MediaType::json) ==
        R"({"argument":{"k":{"$bin":"AQI="},"n":5},"list":[null]})");
}

TEST_CASE("raw bytes that are not one MessagePack value become null in JSON", "[unit]") {
  CHECK(encode_body(raw_msgpack(std::string("\xc1", 1)), MediaType::json) == "null");
  CHECK(encode_body(raw_msgpack(""), MediaType::json) == "null");
}

TEST_CASE("strings that are not UTF-8 are replaced, not thrown on, in JSON", "[unit]") {
  CHECK(encode_body(raw_msgpack(Mp().str("a\xff")), MediaType::json) == "\"a\xEF\xBF\xBD\"");
  CHECK(encode_body(json("b\xfe"), MediaType::json) == "\"b\xEF\xBF\xBD\"");
}

TEST_CASE("msgpack_to_json converts every kind of value", "[unit]") {
  CHECK(to_json(Mp().nil()) == nullptr);
  CHECK(to_json(Mp().boolean(false)) == false);
  CHECK(to_json(Mp().i32(-7)) == -7);
  CHECK(to_json(Mp().u(std::numeric_limits<std::uint64_t>::max())) ==
        std::numeric_limits<std::uint64_t>::max());
  CHECK(to_json(Mp().i(std::numeric_limits<std::int64_t>::min())) ==
        std::numeric_limits<std::int64_t>::min());
  CHECK(to_json(Mp().f32(0.5f)) == 0.5);
  CHECK(to_json(Mp().f64(3.0)).is_number_float());
  CHECK(to_json(Mp().str("héllo")) == "héllo");
  CHECK(to_json(Mp().bin("hi")) == json{{"$bin", "aGk="}});
  CHECK(to_json(Mp().ext(-1, "hi")) == json{{"$bin", "aGk="}});
  CHECK(to_json(Mp().array(2).i(1).str("x")) == json{1, "x"});
  CHECK(to_json(Mp().map(1).str("k").map(1).str("j").array(0)) ==
        json{{"k", {{"j", json::array()}}}});
}

TEST_CASE("NaN and infinite floats become null in JSON", "[unit]") {
  CHECK(to_json(Mp().f64(std::nan(""))) == nullptr);
  CHECK(to_json(Mp().f64(-INFINITY)) == nullptr);
  CHECK(to_json(Mp().f32(INFINITY)) == nullptr);
}

TEST_CASE("map keys that are not strings use their JSON text", "[unit]") {
  // clang-format off
  const std::string map = Mp()
      .map(4)
          .i(1).str("one")
          .nil().i(0)
          .array(2).i(1).i(2).boolean(true)
          .f64(1.5).boolean(false);
  // clang-format on
  CHECK(to_json(map) == json{{"1", "one"}, {"null", 0}, {"[1,2]", true}, {"1.5", false}});
}

// Found by the fuzzer (fuzz_msgpack timed out): each level escaped the key text of the level
// inside it again, doubling it.
TEST_CASE("map keys that are maps nested to the limit stay short", "[unit]") {
  Mp nested;
  for (int i = 1; i < jq::api::MsgpackReader::kMaxDepth; ++i) nested.map(1);
  nested.map(1).str("k").str("v");
  for (int i = 1; i < jq::api::MsgpackReader::kMaxDepth; ++i) nested.nil();
  const json converted = to_json(nested);
  REQUIRE(converted.size() == 1);
  const std::string key = converted.items().begin().key();
  CHECK(key.size() <= 256 + 3);
  CHECK(key.rfind("{", 0) == 0);
  CHECK(key.substr(key.size() - 3) == "...");
}

TEST_CASE("a long key that is not a string is cut at a UTF-8 character boundary", "[unit]") {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "\xc3\xa9";  // é, two bytes each
  const std::string map = Mp().map(1).array(1).str(text).i(1);
  const json converted = to_json(map);
  const std::string key = converted.items().begin().key();
  CHECK(key.size() <= 256 + 3);
  CHECK_NOTHROW(json(key).dump());  // a strict dump throws on a broken UTF-8 character
}

TEST_CASE("msgpack_to_json rejects bytes that are not exactly one value", "[unit]") {
  for (const std::string& bad :
       {std::string(), std::string("\xc1", 1), Mp().i(1).i(2).bytes(), Mp().array(2).i(1).bytes(),
        std::string(100000, '\x91') + std::string(1, '\xc0')}) {
    const auto converted = msgpack_to_json(bad);
    REQUIRE_FALSE(converted);
    CHECK(converted.error().code == ErrorCode::bad_request);
    CHECK_THAT(converted.error().message, Catch::StartsWith("body is not valid MessagePack"));
  }
}

TEST_CASE("json_to_msgpack converts JSON text and keeps key order", "[unit]") {
  const auto bytes = json_to_msgpack(R"({"z":[1,-2,0.5,"s",null,false],"a":{}})");
  REQUIRE(bytes);
  // clang-format off
  CHECK(*bytes == Mp()
      .map(2)
          .str("z").array(6).i(1).i(-2).f32(0.5f).str("s").nil().boolean(false)
          .str("a").map(0).bytes());
  // clang-format on
}

TEST_CASE("json_to_msgpack reports where the JSON is wrong", "[unit]") {
  const auto bytes = json_to_msgpack("{\"a\":\n tru}");
  REQUIRE_FALSE(bytes);
  CHECK(bytes.error().code == ErrorCode::bad_request);
  CHECK_THAT(bytes.error().message, Catch::StartsWith("body is not valid JSON: parse error at "
                                                      "line 2, column"));
  CHECK_THAT(bytes.error().message, !Catch::Contains("[json.exception"));
}

TEST_CASE("json_to_msgpack refuses nesting deeper than the limit", "[unit]") {
  CHECK(json_to_msgpack(std::string(64, '[') + std::string(64, ']')));
  CHECK_FALSE(json_to_msgpack(std::string(65, '[') + std::string(65, ']')));
  // Brackets inside strings do not count.
  CHECK(json_to_msgpack("[\"" + std::string(100, '[') + "\\\"\"]"));
}

TEST_CASE("an error is written as {error, message} plus field and index", "[unit]") {
  ApiError error = ApiError::make(ErrorCode::invalid_job, "priority must be an integer");
  error.field = "priority";
  error.index = 5;
  CHECK(json::parse(encode_error(error, MediaType::json)) ==
        json{{"error", "invalid_job"},
             {"message", "priority must be an integer"},
             {"field", "priority"},
             {"index", 5}});
  CHECK(json::from_msgpack(encode_error(error, MediaType::msgpack)) ==
        json::parse(encode_error(error, MediaType::json)));
  const ApiError plain = ApiError::make(ErrorCode::not_found, "no job abc");
  CHECK(encode_error(plain, MediaType::json) == R"({"error":"not_found","message":"no job abc"})");
}

TEST_CASE("json_to_msgpack rejects a key repeated in one object", "[unit]") {
  const auto top = json_to_msgpack(R"({"name":"a","name":"b"})");
  REQUIRE_FALSE(top);
  CHECK(top.error().code == ErrorCode::bad_request);
  CHECK(top.error().message ==
        "body is not valid JSON: the key \"name\" appears twice in one object");
  CHECK(top.error().field == "name");
  const auto nested = json_to_msgpack(R"([{"a":1},{"a":{"k":1,"k":2}}])");
  REQUIRE_FALSE(nested);
  CHECK(nested.error().message ==
        "body is not valid JSON: at /1/a: the key \"k\" appears twice in one object");
  CHECK(nested.error().field == "a");
  CHECK(nested.error().index == 1u);
  CHECK(json_to_msgpack(R"({"k":{"k":1},"j":[{"k":2},{"k":3}]})"));
}

TEST_CASE("json_to_msgpack refuses an integer outside the 64-bit range, naming the field",
          "[unit]") {
  const auto big = json_to_msgpack(R"({"name":"n","argument":123456789012345678901234567890})");
  REQUIRE_FALSE(big);
  CHECK(big.error().code == ErrorCode::bad_request);
  CHECK(big.error().field == "argument");
  CHECK_FALSE(big.error().index);
  CHECK_THAT(big.error().message,
             Catch::StartsWith("body is not valid JSON: at /argument: "
                               "123456789012345678901234567890 is an integer outside the 64-bit"));
  const auto in_batch =
      json_to_msgpack(R"([{"name":"n"},{"name":"n","argument":{"a":[1,-9223372036854775809]}}])");
  REQUIRE_FALSE(in_batch);
  CHECK(in_batch.error().field == "argument.a[1]");
  CHECK(in_batch.error().index == 1u);
  CHECK_THAT(in_batch.error().message, Catch::Contains("at /1/argument/a/1: -9223372036854775809"));
  CHECK_FALSE(json_to_msgpack("18446744073709551616"));
  // A float too large: named the same way (it was a parse error with no field nor index).
  const auto huge = json_to_msgpack(R"([{"name":"n"},{"name":"n","timeout":1e999}])");
  REQUIRE_FALSE(huge);
  CHECK(huge.error().field == "timeout");
  CHECK(huge.error().index == 1u);
  CHECK_THAT(huge.error().message,
             Catch::Contains("at /1/timeout: 1e999 is outside the range of a 64-bit float"));
  // An integer too large even for a float is still called an integer, and shown shortened.
  const auto giant = json_to_msgpack(R"({"name":"n","priority":)" + std::string(400, '7') + "}");
  REQUIRE_FALSE(giant);
  CHECK(giant.error().field == "priority");
  CHECK(giant.error().message ==
        "body is not valid JSON: at /priority: 777777777777777777777777... (400 characters) is an "
        "integer outside the 64-bit range (-9223372036854775808 to 18446744073709551615); send "
        "it as a string");
}

TEST_CASE("json_to_msgpack keeps the 64-bit extremes as integers and floats as floats", "[unit]") {
  const auto bytes = json_to_msgpack(
      "[-9223372036854775808,18446744073709551615,1e30,1.0,12345678901234567890.5]");
  REQUIRE(bytes);
  const json back = json::from_msgpack(*bytes);
  CHECK(back[0] == std::numeric_limits<std::int64_t>::min());
  CHECK(back[1] == std::numeric_limits<std::uint64_t>::max());
  CHECK(back[2].is_number_float());
  CHECK(back[3].is_number_float());
  CHECK(back[4].is_number_float());
}
