#include <catch2/catch.hpp>

#include "api/media_type.hpp"

using jq::api::choose_response_type;
using jq::api::content_type_name;
using jq::api::MediaType;
using jq::api::parse_content_type;

TEST_CASE("MessagePack content types are recognised", "[unit]") {
  CHECK(parse_content_type("application/msgpack") == MediaType::msgpack);
  CHECK(parse_content_type("application/x-msgpack") == MediaType::msgpack);
  CHECK(parse_content_type("Application/MsgPack") == MediaType::msgpack);
  CHECK(parse_content_type("  application/x-msgpack  ") == MediaType::msgpack);
}

TEST_CASE("JSON content types are recognised with or without parameters", "[unit]") {
  CHECK(parse_content_type("application/json") == MediaType::json);
  CHECK(parse_content_type("application/json; charset=utf-8") == MediaType::json);
  CHECK(parse_content_type("APPLICATION/JSON;charset=UTF-8") == MediaType::json);
  CHECK(parse_content_type(" application/json ;q=1") == MediaType::json);
}

TEST_CASE("other content types are not accepted", "[unit]") {
  CHECK_FALSE(parse_content_type(""));
  CHECK_FALSE(parse_content_type("text/plain"));
  CHECK_FALSE(parse_content_type("application/jsonx"));
  CHECK_FALSE(parse_content_type("application/json-patch+json"));
  CHECK_FALSE(parse_content_type("application/msgpack2"));
  CHECK_FALSE(parse_content_type("application"));
  CHECK_FALSE(parse_content_type("; charset=utf-8"));
}

TEST_CASE("an Accept naming JSON anywhere gets JSON", "[unit]") {
  CHECK(choose_response_type("application/json", MediaType::msgpack) == MediaType::json);
  CHECK(choose_response_type("text/html, application/json;q=0.9", std::nullopt) == MediaType::json);
  CHECK(choose_response_type("application/msgpack, Application/Json", MediaType::msgpack) ==
        MediaType::json);
}

TEST_CASE("an Accept naming only MessagePack gets MessagePack", "[unit]") {
  CHECK(choose_response_type("application/msgpack", MediaType::json) == MediaType::msgpack);
  CHECK(choose_response_type("text/plain, application/x-msgpack", MediaType::json) ==
        MediaType::msgpack);
}

TEST_CASE("without a usable Accept the request body's type decides", "[unit]") {
  CHECK(choose_response_type("", MediaType::json) == MediaType::json);
  CHECK(choose_response_type("*/*", MediaType::json) == MediaType::json);
  CHECK(choose_response_type("text/html", MediaType::json) == MediaType::json);
  CHECK(choose_response_type("", MediaType::msgpack) == MediaType::msgpack);
  CHECK(choose_response_type("", std::nullopt) == MediaType::msgpack);
  CHECK(choose_response_type("*/*", std::nullopt) == MediaType::msgpack);
  CHECK(choose_response_type("application/jsonx", std::nullopt) == MediaType::msgpack);
}

TEST_CASE("content type names are the canonical ones", "[unit]") {
  CHECK(content_type_name(MediaType::msgpack) == "application/msgpack");
  CHECK(content_type_name(MediaType::json) == "application/json");
}
