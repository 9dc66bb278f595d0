// Signed dispatches: the signature of known inputs, and the headers a signed call gets.
#include <catch2/catch.hpp>

#include <string>

#include "src/dispatch/signature.hpp"
#include "src/util/hex.hpp"

using jq::hex_decode;
using jq::hex_encode;
using jq::dispatch::dispatch_signature;
using jq::dispatch::sign_call;
using jq::dispatch::WorkerCall;

namespace {

// A MessagePack body with a NUL byte: the signature covers raw bytes, not text.
const std::string kBody("\x81\xa1\x61\x00", 4);
// Python's hmac.new(b"0123456789abcdef", b"1700000000." + body, hashlib.sha256).hexdigest().
constexpr const char* kExpected =
    "v1=5365c416fa6a3f680baac03e6a07715fda4cdfabc5ab78e4eabf170b71f6a46e";

}  // namespace

TEST_CASE("a dispatch signature is HMAC-SHA256 over timestamp, dot and body, in hex", "[unit]") {
  const auto signature = dispatch_signature("0123456789abcdef", "1700000000", kBody);
  REQUIRE(signature);
  CHECK(*signature == kExpected);
  CHECK(*dispatch_signature("0123456789abcdeF", "1700000000", kBody) != kExpected);
  CHECK(*dispatch_signature("0123456789abcdef", "1700000001", kBody) != kExpected);
  CHECK(*dispatch_signature("0123456789abcdef", "1700000000", kBody + " ") != kExpected);
}

TEST_CASE("a signed call carries the timestamp and the signature of its body", "[unit]") {
  WorkerCall call;
  call.headers = {{"X-Jq-Job-Id", "1-000000001"}};
  call.body = kBody;
  REQUIRE(sign_call(call, "0123456789abcdef", 1700000000));
  CHECK(call.headers ==
        std::vector<std::pair<std::string, std::string>>{{"X-Jq-Job-Id", "1-000000001"},
                                                         {"X-Jq-Timestamp", "1700000000"},
                                                         {"X-Jq-Signature", kExpected}});
  CHECK(call.body == kBody);
}

TEST_CASE("hex round-trips any bytes and refuses what is not hex", "[unit]") {
  const std::string bytes("\x00\x7f\x80\xff secret", 11);
  CHECK(hex_encode(bytes) == "007f80ff20736563726574");
  CHECK(hex_decode(hex_encode(bytes)) == bytes);
  CHECK(hex_decode("ABcd") == std::string("\xab\xcd"));
  CHECK(hex_decode("") == std::string());
  CHECK_FALSE(hex_decode("abc"));
  CHECK_FALSE(hex_decode("zz"));
}
