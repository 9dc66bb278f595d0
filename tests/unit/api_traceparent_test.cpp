// The traceparent header a push may carry: only W3C version 00, lower-case, non-zero ids.
#include <catch2/catch.hpp>

#include "api/traceparent.hpp"

using jq::api::is_valid_traceparent;

TEST_CASE("a version-00 traceparent with lower-case hex and non-zero ids is valid", "[unit]") {
  CHECK(is_valid_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
  CHECK(is_valid_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"));
  CHECK(is_valid_traceparent("00-00000000000000000000000000000001-0000000000000001-ff"));
}

TEST_CASE("a traceparent with upper-case hex or the wrong field widths is invalid", "[unit]") {
  CHECK_FALSE(is_valid_traceparent(""));
  CHECK_FALSE(is_valid_traceparent("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"));
  CHECK_FALSE(is_valid_traceparent("00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01"));
  CHECK_FALSE(is_valid_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b-01"));
  CHECK_FALSE(is_valid_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1"));
  CHECK_FALSE(is_valid_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-"));
  CHECK_FALSE(is_valid_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g"));
  CHECK_FALSE(is_valid_traceparent("00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
  CHECK_FALSE(is_valid_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01"));
  CHECK_FALSE(is_valid_traceparent(" 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
}

TEST_CASE("a traceparent of another version is not kept", "[unit]") {
  CHECK_FALSE(is_valid_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
  CHECK_FALSE(is_valid_traceparent("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
}

TEST_CASE("a traceparent with an all-zero trace id or parent id is invalid", "[unit]") {
  CHECK_FALSE(is_valid_traceparent("00-00000000000000000000000000000000-00f067aa0ba902b7-01"));
  CHECK_FALSE(is_valid_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"));
}
