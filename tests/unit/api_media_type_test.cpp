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

TEST_CASE("an Accept naming JSON and not MessagePack gets JSON", "[unit]") {
  CHECK(choose_response_type("application/json", MediaType::msgpack) == MediaType::json);
  CHECK(choose_response_type("text/html, application/json;q=0.9", std::nullopt) == MediaType::json);
  CHECK(choose_response_type("Application/Json", MediaType::msgpack) == MediaType::json);
}

TEST_CASE("an Accept naming MessagePack gets MessagePack unless JSON has a higher q-value",
          "[unit]") {
  CHECK(choose_response_type("application/msgpack", MediaType::json) == MediaType::msgpack);
  CHECK(choose_response_type("text/plain, application/x-msgpack", MediaType::json) ==
        MediaType::msgpack);
  CHECK(choose_response_type("application/msgpack, application/json", std::nullopt) ==
        MediaType::msgpack);
  CHECK(choose_response_type("application/json;q=0.5, application/msgpack", std::nullopt) ==
        MediaType::msgpack);
  CHECK(choose_response_type("application/msgpack;q=0.2, application/json", MediaType::msgpack) ==
        MediaType::json);
  CHECK(choose_response_type("application/msgpack; level=1; Q=0.9, application/json;q=0.8",
                             std::nullopt) == MediaType::msgpack);
}

TEST_CASE("q=0 means not acceptable", "[unit]") {
  CHECK(choose_response_type("application/msgpack;q=0", MediaType::msgpack) == MediaType::json);
  CHECK(choose_response_type("application/json;q=0, application/x-msgpack;q=0.1", std::nullopt) ==
        MediaType::msgpack);
  CHECK(choose_response_type("application/msgpack;q=0.000, */*", MediaType::msgpack) ==
        MediaType::json);
}

TEST_CASE("a q-value that is not one is not a preference", "[unit]") {
  CHECK(choose_response_type("application/msgpack;q=abc, application/json", std::nullopt) ==
        MediaType::json);
  CHECK(choose_response_type("application/msgpack;q=1.5", std::nullopt) == MediaType::json);
  CHECK(choose_response_type("application/msgpack;q=0.0001", std::nullopt) == MediaType::json);
  CHECK(choose_response_type("application/msgpack;q=1.000", std::nullopt) == MediaType::msgpack);
}

TEST_CASE(
    "without an Accept that names a type, a MessagePack body gets MessagePack and "
    "everything else JSON",
    "[unit]") {
  CHECK(choose_response_type("", MediaType::msgpack) == MediaType::msgpack);
  CHECK(choose_response_type("*/*", MediaType::msgpack) == MediaType::msgpack);
  CHECK(choose_response_type("", MediaType::json) == MediaType::json);
  CHECK(choose_response_type("*/*", MediaType::json) == MediaType::json);
  CHECK(choose_response_type("text/html", MediaType::json) == MediaType::json);
  CHECK(choose_response_type("", std::nullopt) == MediaType::json);
  CHECK(choose_response_type("*/*", std::nullopt) == MediaType::json);
  CHECK(choose_response_type("application/*", std::nullopt) == MediaType::json);
  CHECK(choose_response_type("application/jsonx", std::nullopt) == MediaType::json);
  CHECK(choose_response_type(
            "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8",
            std::nullopt) == MediaType::json);
}

TEST_CASE("content type names are the canonical ones", "[unit]") {
  CHECK(content_type_name(MediaType::msgpack) == "application/msgpack");
  CHECK(content_type_name(MediaType::json) == "application/json");
}
