// The master's answers as written on the wire (status line and headers): what Beast wrote for
// them before, now written by hand into one buffer.
#include <catch2/catch.hpp>

#include "src/http/beast_message.hpp"

using jq::http::encode_response_head;
using jq::http::Response;

TEST_CASE("an answer's head has its status, type, length and the handler's headers", "[unit]") {
  Response r{201, "application/json", "{\"id\":\"1-000000001\"}", {}};
  CHECK(encode_response_head(r, 11, true) ==
        "HTTP/1.1 201 Created\r\nServer: jqmaster\r\nContent-Type: application/json\r\n"
        "Content-Length: 20\r\n\r\n");

  Response busy{503, "application/msgpack", "xyz", {{"Retry-After", "5"}}};
  CHECK(encode_response_head(busy, 11, true) ==
        "HTTP/1.1 503 Service Unavailable\r\nServer: jqmaster\r\n"
        "Content-Type: application/msgpack\r\nRetry-After: 5\r\nContent-Length: 3\r\n\r\n");
}

TEST_CASE("an answer's head says Connection as HTTP/1.1 and HTTP/1.0 need it", "[unit]") {
  const Response none{204, {}, {}, {}};
  CHECK(encode_response_head(none, 11, true) ==
        "HTTP/1.1 204 No Content\r\nServer: jqmaster\r\nContent-Length: 0\r\n\r\n");
  CHECK(encode_response_head(none, 11, false) ==
        "HTTP/1.1 204 No Content\r\nServer: jqmaster\r\nConnection: close\r\n"
        "Content-Length: 0\r\n\r\n");
  CHECK(encode_response_head(none, 10, true) ==
        "HTTP/1.0 204 No Content\r\nServer: jqmaster\r\nConnection: keep-alive\r\n"
        "Content-Length: 0\r\n\r\n");
  CHECK(encode_response_head(none, 10, false) ==
        "HTTP/1.0 204 No Content\r\nServer: jqmaster\r\nContent-Length: 0\r\n\r\n");
}

TEST_CASE("a handler's header replaces an earlier one of the same name, whatever its case",
          "[unit]") {
  Response r{200, "text/html", "<p>", {{"content-type", "text/plain"}, {"Allow", "GET"}}};
  CHECK(encode_response_head(r, 11, true) ==
        "HTTP/1.1 200 OK\r\nServer: jqmaster\r\ncontent-type: text/plain\r\nAllow: GET\r\n"
        "Content-Length: 3\r\n\r\n");
}
