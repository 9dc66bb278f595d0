// json_to_msgpack against its reference, nlohmann's parser and to_msgpack, on texts chosen for
// the corners of JSON (tests/fuzz/fuzz_json.cpp runs the same check on generated texts).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "api/body.hpp"
#include "tests/support/json_reference.hpp"

namespace jq::test {
namespace {

std::string repeated(const std::string& unit, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += unit;
  return out;
}

// n members (or elements) "k0": 0, ... in one object (or array).
std::string object_of(int n) {
  std::string text = "{";
  for (int i = 0; i < n; ++i)
    text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  return text + "}";
}
std::string array_of(int n) {
  std::string text = "[";
  for (int i = 0; i < n; ++i) text += (i ? "," : "") + std::to_string(i);
  return text + "]";
}

}  // namespace

TEST_CASE("json_to_msgpack writes what nlohmann writes, and refuses what it refuses", "[unit]") {
  const std::vector<std::string> texts = {
      // values and whitespace
      "null", "true", "false", "0", "-0", "1", "-1", "127", "128", "255", "256", "65535", "65536",
      "4294967295", "4294967296", "-32", "-33", "-128", "-129", "-32768", "-32769", "-2147483648",
      "-2147483649", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
      "18446744073709551615", " \t\r\n[ 1 , 2 ]\n", "{}", "[]", "[[]]", "{\"a\":{}}", "\"\"",
      // floats: float 32 when exact, float 64 otherwise, and what strtod makes of the rest
      "0.5", "-0.0", "1.0", "1e5", "1E+5", "1e-5", "0.1", "3.4028234663852886e38",
      "3.4028235677973366e38", "-3.4028234663852886e38", "1e-400", "2.5e-45", "1e308",
      "123456789012345678901234567890.5", "0.30000000000000004",
      // strings: lengths at the header sizes, escapes, UTF-8 of every length
      "\"" + std::string(31, 'a') + "\"", "\"" + std::string(32, 'a') + "\"",
      "\"" + std::string(255, 'a') + "\"", "\"" + std::string(256, 'a') + "\"",
      "\"" + std::string(65535, 'a') + "\"", "\"" + std::string(65536, 'a') + "\"",
      R"("\" \\ \/ \b \f \n \r \t")", R"("\u0000")", R"("\u00e9\u20AC")", R"("\ud83d\ude00")",
      "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \x7f\"", R"("a\u0041b")",
      "\"" + repeated("\\n", 40) + "\"",
      // containers at the header sizes, keys kept in order
      array_of(15), array_of(16), array_of(65535), array_of(65536), object_of(15), object_of(16),
      object_of(17), object_of(200), object_of(65536), R"({"z":1,"a":2,"m":[{"b":3,"a":4}]})",
      repeated("[", 64) + repeated("]", 64), "[\"" + repeated("[", 100) + "\\\"\"]",
      "\xEF\xBB\xBF{\"a\":1}",
      // not JSON
      "", " ", "nul", "tru", "True", "NaN", "Infinity", "-", "+1", "01", "-01", "1.", ".5", "1e",
      "1e+", "0x10", "1 2", "[1,]", "[,1]", "{\"a\":1,}", "{\"a\"}", "{\"a\" 1}", "{a:1}", "{1:2}",
      "[1", "{\"a\":1", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\u12g4\"", "\"\\ud800\"",
      "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\ud800x\"", "\"a\x01\"", "\"\x1f\"", "\"\x80\"",
      "\"\xc0\x80\"", "\"\xc1\xbf\"", "\"\xe0\x80\x80\"", "\"\xed\xa0\x80\"",
      "\"\xf4\x90\x80\x80\"", "\"\xf5\x80\x80\x80\"", "\"\xc3\"", "\"\xe2\x82\"", "\xEF\xBB",
      "\xEF\xBB\xBF", "1e400", "-1e400", "[1]x", std::string("{\"a\":1}\0x", 9),
      // refused for json_to_msgpack's own reasons
      R"({"a":1,"a":2})", R"({"a":1,"b":{"c":1,"c":1}})", object_of(16).insert(1, "\"k3\":0,"),
      object_of(40).insert(1, "\"k39\":0,"), R"({"\u0061":1,"a":2})", "18446744073709551616",
      "-9223372036854775809", repeated("[", 65) + repeated("]", 65)};
  for (const std::string& text : texts) {
    INFO("text: " << text.substr(0, 120));
    CHECK(json_reference_mismatch(text).empty());
  }
}

// Strings are checked eight bytes at a time (plain_run): every kind of byte that ends a plain run,
// at every place in and around a word, in strings of every length around one.
TEST_CASE("a string's special bytes are found wherever they fall in an eight-byte word", "[unit]") {
  const std::vector<std::string> specials = {"\\\"",
                                             "\\\\",
                                             "\\n",
                                             "\\u00e9",
                                             "\x01",
                                             "\x1f",
                                             "\x7f",
                                             "\x80",
                                             "\xc3\xa9",
                                             "\xe2\x82\xac",
                                             "\xf0\x9f\x98\x80",
                                             "\xc3",
                                             "\xe2\x82",
                                             "\xed\xa0\x80",
                                             "\xff",
                                             "\x20",
                                             "~"};
  for (const std::string& special : specials) {
    for (int before = 0; before <= 17; ++before) {
      for (const int after : {0, 1, 7, 8, 9}) {
        const std::string inner = std::string(before, 'a') + special + std::string(after, 'b');
        for (const std::string& text :
             {"\"" + inner + "\"", "[\"" + inner + "\",\"" + inner + special + "\"]",
              "{\"" + inner + "\":1}", "\"" + inner}) {
          INFO("text: " << text);
          CHECK(json_reference_mismatch(text).empty());
        }
      }
    }
  }
  for (int n = 0; n <= 33; ++n) {
    const std::string text = "\"" + std::string(n, 'x') + "\"";
    INFO("text: " << text);
    CHECK(json_reference_mismatch(text).empty());
  }
}

TEST_CASE("json_to_msgpack refuses each text that is not JSON, or that it cannot hold", "[unit]") {
  for (const std::string& bad :
       {std::string("01"), std::string("[1,]"), std::string("\"\\ud800\""),
        std::string("\"\xed\xa0\x80\""), std::string(R"({"a":1,"a":2})"),
        object_of(40).insert(1, "\"k39\":0,"), std::string("18446744073709551616"),
        std::string("1e400"), std::string("{\"a\":1}\0x", 9)}) {
    INFO("text: " << bad.substr(0, 60));
    const auto packed = api::json_to_msgpack(bad);
    REQUIRE_FALSE(packed);
    CHECK(packed.error().code == api::ErrorCode::bad_request);
    CHECK_THAT(packed.error().message, Catch::StartsWith("body is not valid JSON: "));
  }
}

TEST_CASE("a key repeated past the first 16 keys of an object is refused, naming it", "[unit]") {
  const auto packed = api::json_to_msgpack(object_of(40).insert(1, "\"k39\":0,"));
  REQUIRE_FALSE(packed);
  CHECK(packed.error().field == "k39");
  CHECK(packed.error().message ==
        "body is not valid JSON: the key \"k39\" appears twice in one object");
}

}  // namespace jq::test
