// Log lines carry text from outside (a request's path, a worker's error message): it must not
// break a line in two, nor make a JSON line invalid.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "src/log/json_escape.hpp"

using jq::log::append_json_string;
using jq::log::append_log_text;

namespace {

std::string json_of(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

std::string text_of(std::string_view s) {
  std::string out;
  append_log_text(out, s);
  return out;
}

}  // namespace

TEST_CASE("a JSON log string stays valid JSON whatever bytes it is given", "[unit]") {
  CHECK(nlohmann::json::parse(json_of("a\"b\\c\nd\x01")) == "a\"b\\c\nd\x01");
  CHECK(nlohmann::json::parse(json_of("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80")) ==
        "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");  // well-formed UTF-8 kept as it is
  // Bytes that are not UTF-8 (a lone continuation, a cut sequence, an overlong form, a
  // surrogate) become U+FFFD instead of making the line unreadable.
  for (const std::string bad : {"\x80", "\xff", "x\xc3", "\xe2\x82", "\xc0\xaf", "\xed\xa0\x80"}) {
    INFO("bytes " << bad.size());
    const std::string line = json_of(bad);
    REQUIRE_NOTHROW(nlohmann::json::parse(line));
    CHECK(nlohmann::json::parse(line).get<std::string>().find("\xef\xbf\xbd") != std::string::npos);
  }
}

TEST_CASE("a text log field cannot break its line or carry stray bytes", "[unit]") {
  CHECK(text_of("/v1/jobs") == "/v1/jobs");
  CHECK(text_of("/v1/x\n2026-12-01 [info] fake") == "/v1/x\\x0a2026-12-01 [info] fake");
  CHECK(text_of("a\rb\x1b[31m") == "a\\x0db\\x1b[31m");
  CHECK(text_of("back\\slash") == "back\\x5cslash");
  CHECK(text_of("caf\xc3\xa9") == "caf\xc3\xa9");
  CHECK(text_of("\xff") == "\\xff");
}
