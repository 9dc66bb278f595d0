// The RESP codec: commands to exact bytes, bytes (in any slicing) to reply trees.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "src/redis/resp.hpp"

using jq::redis::Reply;
using jq::redis::ReplyParser;

namespace {

std::string command(std::vector<std::string_view> args) {
  std::string out;
  jq::redis::append_command(out, args);
  return out;
}

// Feeds all of `bytes` and takes one reply; fails the test when none is complete.
Reply parse_one(std::string_view bytes) {
  ReplyParser parser;
  parser.feed(bytes.data(), bytes.size());
  auto reply = parser.next();
  REQUIRE_FALSE(parser.failed());
  REQUIRE(reply);
  CHECK_FALSE(parser.next());
  return *reply;
}

}  // namespace

TEST_CASE("append_command encodes a command as a RESP array of bulk strings", "[unit]") {
  CHECK(command({"PING"}) == "*1\r\n$4\r\nPING\r\n");
  CHECK(command({"SET", "key", "value"}) == "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n");
  CHECK(command({"SET", "k", ""}) == "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n");
}

TEST_CASE("append_command sends binary arguments byte for byte", "[unit]") {
  const std::string binary("a\0b\r\nc\xff", 7);
  CHECK(command({"SET", "k", binary}) ==
        std::string("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$7\r\na\0b\r\nc\xff\r\n", 33));
}

TEST_CASE("append_command appends to what is already buffered", "[unit]") {
  std::string out = "*1\r\n$4\r\nPING\r\n";
  std::vector<std::string_view> args = {"GET", "k"};
  jq::redis::append_command(out, args);
  CHECK(out == "*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
}

TEST_CASE("append_command handles commands with many arguments", "[unit]") {
  std::vector<std::string> storage;
  for (int i = 0; i < 40; ++i) storage.push_back("arg" + std::to_string(i));
  std::vector<std::string_view> args(storage.begin(), storage.end());
  std::string expected = "*40\r\n";
  for (const std::string& a : storage) {
    expected += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  }
  std::string out;
  jq::redis::append_command(out, args);
  CHECK(out == expected);
}

TEST_CASE("ReplyParser reads every RESP2 reply type", "[unit]") {
  auto status = parse_one("+OK\r\n");
  CHECK(status.type == Reply::Type::status);
  CHECK(status.str == "OK");
  CHECK(status.is_string());

  auto error = parse_one("-NOSCRIPT No matching script\r\n");
  CHECK(error.is_error());
  CHECK(error.str == "NOSCRIPT No matching script");

  auto integer = parse_one(":-42\r\n");
  CHECK(integer.is_integer());
  CHECK(integer.integer == -42);
  CHECK(parse_one(":9223372036854775807\r\n").integer == INT64_MAX);

  auto bulk = parse_one("$5\r\nhello\r\n");
  CHECK(bulk.type == Reply::Type::string);
  CHECK(bulk.str == "hello");
  CHECK(parse_one("$0\r\n\r\n").str.empty());
  CHECK(parse_one("$0\r\n\r\n").type == Reply::Type::string);

  CHECK(parse_one("$-1\r\n").is_nil());
  CHECK(parse_one("*-1\r\n").is_nil());

  auto empty = parse_one("*0\r\n");
  CHECK(empty.is_array());
  CHECK(empty.elements.empty());
}

TEST_CASE("ReplyParser keeps binary bulk strings intact", "[unit]") {
  const std::string bytes("\0\r\n$3\r\n\xff", 8);
  auto reply = parse_one("$8\r\n" + bytes + "\r\n");
  CHECK(reply.str == bytes);
}

TEST_CASE("ReplyParser reads nested arrays with nils inside", "[unit]") {
  auto reply = parse_one("*3\r\n:1\r\n*2\r\n$1\r\na\r\n*1\r\n$-1\r\n+x\r\n");
  REQUIRE(reply.is_array());
  REQUIRE(reply.elements.size() == 3);
  CHECK(reply.elements[0].integer == 1);
  const Reply& inner = reply.elements[1];
  REQUIRE(inner.is_array());
  REQUIRE(inner.elements.size() == 2);
  CHECK(inner.elements[0].str == "a");
  REQUIRE(inner.elements[1].is_array());
  REQUIRE(inner.elements[1].elements.size() == 1);
  CHECK(inner.elements[1].elements[0].is_nil());
  CHECK(reply.elements[2].str == "x");
}

TEST_CASE("ReplyParser keeps each element's type inside an array", "[unit]") {
  // As EXEC answers: one command failed, the others did not.
  auto reply = parse_one("*4\r\n-ERR wrong type\r\n:7\r\n+QUEUED\r\n$2\r\nab\r\n");
  REQUIRE(reply.elements.size() == 4);
  CHECK(reply.elements[0].is_error());
  CHECK(reply.elements[0].str == "ERR wrong type");
  CHECK(reply.elements[1].integer == 7);
  CHECK(reply.elements[2].type == Reply::Type::status);
  CHECK(reply.elements[3].type == Reply::Type::string);
  CHECK(reply.elements[3].str == "ab");
}

TEST_CASE("ReplyParser completes a reply fed one byte at a time", "[unit]") {
  const std::string frame = "*2\r\n$5\r\nhello\r\n:7\r\n";
  ReplyParser parser;
  for (std::size_t i = 0; i + 1 < frame.size(); ++i) {
    parser.feed(&frame[i], 1);
    CHECK_FALSE(parser.next());
  }
  parser.feed(&frame.back(), 1);
  auto reply = parser.next();
  REQUIRE(reply);
  CHECK(reply->elements.size() == 2);
  CHECK(reply->elements[0].str == "hello");
  CHECK(reply->elements[1].integer == 7);
  CHECK_FALSE(parser.failed());
}

TEST_CASE("ReplyParser hands out pipelined replies one at a time, in order", "[unit]") {
  const std::string frames = "+OK\r\n:1\r\n$1\r\nx\r\n";
  ReplyParser parser;
  parser.feed(frames.data(), frames.size());
  CHECK(parser.next()->str == "OK");
  CHECK(parser.next()->integer == 1);
  CHECK(parser.next()->str == "x");
  CHECK_FALSE(parser.next());
  CHECK_FALSE(parser.failed());
}

TEST_CASE("ReplyParser reads a large bulk string", "[unit]") {
  const std::string big(3 * 1024 * 1024, 'z');
  const std::string frame = "$" + std::to_string(big.size()) + "\r\n" + big + "\r\n";
  ReplyParser parser;
  for (std::size_t at = 0; at < frame.size(); at += 65536) {
    parser.feed(frame.data() + at, std::min<std::size_t>(65536, frame.size() - at));
  }
  auto reply = parser.next();
  REQUIRE(reply);
  CHECK(reply->str == big);
}

TEST_CASE("ReplyParser marks malformed input as failed", "[unit]") {
  ReplyParser parser;
  const std::string bad = "?what\r\n";
  parser.feed(bad.data(), bad.size());
  CHECK_FALSE(parser.next());
  CHECK(parser.failed());
}

TEST_CASE("ReplyParser stays failed after malformed input", "[unit]") {
  ReplyParser parser;
  const std::string bad = "+OK\r\n?\r\n";
  parser.feed(bad.data(), bad.size());
  CHECK(parser.next()->str == "OK");
  CHECK_FALSE(parser.next());
  CHECK(parser.failed());
  const std::string good = "+OK\r\n";
  parser.feed(good.data(), good.size());
  CHECK(parser.failed());
}

// Found by tests/fuzz/fuzz_resp: hiredis 0.14 allocated the element table of "*311111111"
// (2.4 GB) as soon as it read the header.
TEST_CASE("ReplyParser refuses an array header above a million elements", "[unit]") {
  ReplyParser parser;
  const std::string huge = "*311111111\r\n*2\r\n+a\r\n";
  parser.feed(huge.data(), huge.size());
  CHECK_FALSE(parser.next());
  CHECK(parser.failed());

  ReplyParser fine;
  const std::string big = "*1048576\r\n";
  fine.feed(big.data(), big.size());
  CHECK_FALSE(fine.next());  // waits for the elements
  CHECK_FALSE(fine.failed());
}

TEST_CASE("ReplyParser fails on malformed input or a refused count inside an array", "[unit]") {
  // A reply abandoned half-built: hiredis frees it (the fuzzers run with leak checks).
  for (const std::string bad : {"*3\r\n:1\r\n?x\r\n", "*2\r\n:1\r\n*2000000\r\n",
                                "*2\r\n*2\r\n$1\r\na\r\n*311111111\r\n"}) {
    ReplyParser parser;
    parser.feed(bad.data(), bad.size());
    CHECK_FALSE(parser.next());
    CHECK(parser.failed());
  }
  ReplyParser pending;  // destroyed with a reply half-read
  const std::string part = "*3\r\n:1\r\n*2\r\n+a\r\n";
  pending.feed(part.data(), part.size());
  CHECK_FALSE(pending.next());
  CHECK_FALSE(pending.failed());
}

TEST_CASE("ReplyParser reads an array larger than the room it makes ahead", "[unit]") {
  // 3,000 elements, arrays among them, fed in small pieces.
  std::string frame = "*3000\r\n";
  for (int i = 0; i < 3000; ++i) {
    frame += i % 3 == 0 ? "*2\r\n:" + std::to_string(i) + "\r\n$1\r\nx\r\n"
                        : ":" + std::to_string(i) + "\r\n";
  }
  ReplyParser parser;
  for (std::size_t at = 0; at < frame.size(); at += 7) {
    parser.feed(frame.data() + at, std::min<std::size_t>(7, frame.size() - at));
  }
  auto reply = parser.next();
  REQUIRE(reply);
  REQUIRE(reply->elements.size() == 3000);
  for (int i = 0; i < 3000; ++i) {
    const Reply& e = reply->elements[static_cast<std::size_t>(i)];
    if (i % 3 == 0) {
      REQUIRE(e.elements.size() == 2);
      CHECK(e.elements[0].integer == i);
      CHECK(e.elements[1].str == "x");
    } else {
      CHECK(e.integer == i);
    }
  }
}
