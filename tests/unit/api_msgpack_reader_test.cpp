#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "api/msgpack_reader.hpp"
#include "api_test_msgpack.hpp"

using jq::api::MsgpackKind;
using jq::api::MsgpackReader;
using jq::api::single_value_problem;
using jq::api::test::Mp;

namespace {

std::string nested_arrays(int depth) {
  return std::string(static_cast<std::size_t>(depth), '\x91') + std::string("\xc0", 1);
}

// A value with every kind of MessagePack value in it.
std::string every_kind() {
  // clang-format off
  return Mp()
      .map(9)
          .str("nil").nil()
          .str("bool").boolean(true)
          .str("int").i(-5)
          .str("uint").u(std::numeric_limits<std::uint64_t>::max())
          .str("float").f32(1.5f)
          .str("double").f64(2.25)
          .str("bin").bin(std::string("\x00\x01", 2))
          .str("ext").ext(7, "abc")
          .str("list").array(2).str("x").map(1).i(1).array(0)
      .bytes();
  // clang-format on
}

// One read by a reader over `bytes`, which lives until the end of the caller's expression.
template <class Read>
auto read1(const std::string& bytes, Read read) {
  MsgpackReader reader(bytes);
  return (reader.*read)();
}

}  // namespace

TEST_CASE("the reader reads integers of every width and sign", "[unit]") {
  const auto read = [](const std::string& bytes) {
    MsgpackReader reader(bytes);
    auto i = reader.read_int();
    REQUIRE(i);
    CHECK(reader.at_end());
    return *i;
  };
  CHECK(read(Mp().i(5)).value == 5);
  CHECK(read(Mp().i(-1)).value == -1);
  CHECK(read(Mp().i(-32)).value == -32);
  CHECK(read(Mp().i(-33)).value == -33);
  CHECK(read(Mp().i(200)).value == 200);
  CHECK(read(Mp().i(-200)).value == -200);
  CHECK(read(Mp().i(40000)).value == 40000);
  CHECK(read(Mp().i(-40000)).value == -40000);
  CHECK(read(Mp().i(3'000'000'000)).value == 3'000'000'000);
  CHECK(read(Mp().i(-3'000'000'000)).value == -3'000'000'000);
  CHECK(read(Mp().i32(7)).value == 7);
  CHECK(read(Mp().i32(-7)).value == -7);
  CHECK(read(Mp().i(std::numeric_limits<std::int64_t>::min())).value ==
        std::numeric_limits<std::int64_t>::min());
  CHECK(read(Mp().i(std::numeric_limits<std::int64_t>::max())).value ==
        std::numeric_limits<std::int64_t>::max());
  const auto big = read(Mp().u(std::numeric_limits<std::uint64_t>::max()));
  CHECK(big.above_int64);
  CHECK(big.as_unsigned() == std::numeric_limits<std::uint64_t>::max());
  CHECK_FALSE(big.in_range(std::numeric_limits<std::int64_t>::min(),
                           std::numeric_limits<std::int64_t>::max()));
}

TEST_CASE("the reader sign-extends every signed width", "[unit]") {
  CHECK(read1(std::string("\xd0\x80", 2), &MsgpackReader::read_int)->value == -128);
  CHECK(read1(std::string("\xd1\x80\x00", 3), &MsgpackReader::read_int)->value == -32768);
  CHECK(read1(std::string("\xd2\xff\xff\xff\xfe", 5), &MsgpackReader::read_int)->value == -2);
  CHECK(read1(std::string("\xd0\x7f", 2), &MsgpackReader::read_int)->value == 127);
  CHECK(read1(std::string("\xcc\xff", 2), &MsgpackReader::read_int)->value == 255);
}

TEST_CASE("the reader reads floats, booleans, nil, strings, bin and ext", "[unit]") {
  CHECK(*read1(Mp().f32(1.5f), &MsgpackReader::read_float) == 1.5);
  CHECK(*read1(Mp().f64(-2.25), &MsgpackReader::read_float) == -2.25);
  CHECK(*read1(Mp().boolean(true), &MsgpackReader::read_bool) == true);
  CHECK(*read1(Mp().boolean(false), &MsgpackReader::read_bool) == false);
  CHECK(read1(Mp().nil(), &MsgpackReader::read_nil));
  CHECK(*read1(Mp().str("héllo"), &MsgpackReader::read_str) == "héllo");
  CHECK(*read1(Mp().str(std::string(300, 'a')), &MsgpackReader::read_str) == std::string(300, 'a'));
  CHECK(*read1(Mp().str(std::string(70000, 'b')), &MsgpackReader::read_str) ==
        std::string(70000, 'b'));
  CHECK(*read1(Mp().bin(std::string("\0\1", 2)), &MsgpackReader::read_bin) ==
        std::string("\0\1", 2));
  for (std::size_t size : {1u, 2u, 4u, 8u, 16u, 3u, 300u, 70000u}) {
    const std::string payload(size, 'x');
    const std::string bytes = Mp().ext(-3, payload);
    auto ext = read1(bytes, &MsgpackReader::read_ext);
    REQUIRE(ext);
    CHECK(ext->type == -3);
    CHECK(ext->data == payload);
  }
}

TEST_CASE("the reader reads container headers", "[unit]") {
  const std::string bytes = Mp().map(1).str("k").array(2).i(1).i(2);
  MsgpackReader reader(bytes);
  CHECK(reader.read_map_header() == 1u);
  CHECK(reader.read_str() == "k");
  CHECK(reader.read_array_header() == 2u);
  CHECK(reader.read_int()->value == 1);
  CHECK(reader.read_int()->value == 2);
  CHECK(reader.at_end());
  CHECK(read1(std::string("\xdc\x00\x01\xc0", 4), &MsgpackReader::read_array_header) == 1u);
  CHECK(read1(std::string("\xdf\x00\x00\x00\x01\xc0\xc0", 7), &MsgpackReader::read_map_header) ==
        1u);
}

TEST_CASE("peek names the kind of the next value without consuming it", "[unit]") {
  const std::string bytes = Mp().f64(1).str("a").bin("b").ext(1, "c").nil().boolean(true);
  MsgpackReader reader(bytes);
  CHECK(reader.peek() == MsgpackKind::floating);
  CHECK(reader.offset() == 0);
  reader.skip();
  CHECK(reader.peek() == MsgpackKind::str);
  reader.skip();
  CHECK(reader.peek() == MsgpackKind::bin);
  reader.skip();
  CHECK(reader.peek() == MsgpackKind::ext);
  reader.skip();
  CHECK(reader.peek() == MsgpackKind::nil);
  reader.skip();
  CHECK(reader.peek() == MsgpackKind::boolean);
  reader.skip();
  CHECK(reader.peek() == MsgpackKind::invalid);
  CHECK(read1(std::string("\xc1"), &MsgpackReader::peek) == MsgpackKind::invalid);
}

TEST_CASE("a read of the wrong kind fails without moving the cursor", "[unit]") {
  const std::string bytes = Mp().f64(3.0);
  MsgpackReader reader(bytes);
  CHECK_FALSE(reader.read_int());
  CHECK_FALSE(reader.read_str());
  CHECK_FALSE(reader.read_map_header());
  CHECK_FALSE(reader.read_nil());
  CHECK(reader.offset() == 0);
  CHECK(reader.error().find("expected") != std::string_view::npos);
  CHECK(reader.read_float() == 3.0);
}

TEST_CASE("an integer is not a float and a float is not an integer", "[unit]") {
  CHECK_FALSE(read1(Mp().i(3), &MsgpackReader::read_float));
  CHECK_FALSE(read1(Mp().f64(3.0), &MsgpackReader::read_int));
  CHECK_FALSE(read1(Mp().f32(3.0f), &MsgpackReader::read_int));
}

TEST_CASE("skip returns the exact bytes of one whole value", "[unit]") {
  const std::string first = every_kind();
  const std::string second = Mp().i32(1);
  const std::string both = first + second;
  MsgpackReader reader(both);
  CHECK(reader.skip() == first);
  CHECK(reader.skip() == second);
  CHECK(reader.at_end());
  CHECK_FALSE(reader.skip());
}

TEST_CASE("truncated input fails at every cut and never over-reads", "[unit]") {
  const std::string whole = every_kind();
  for (std::size_t cut = 0; cut < whole.size(); ++cut) {
    const std::string prefix = whole.substr(0, cut);  // its own buffer: ASan would catch reads
    MsgpackReader reader(prefix);
    INFO("cut at " << cut);
    CHECK_FALSE(reader.skip());
    CHECK(reader.offset() == 0);
    CHECK_FALSE(reader.error().empty());
    CHECK_FALSE(single_value_problem(prefix).empty());
  }
  CHECK(single_value_problem(whole).empty());
}

TEST_CASE("huge declared lengths are rejected, not trusted", "[unit]") {
  const std::string cases[] = {
      std::string("\xdb\xff\xff\xff\xff"
                  "abc",
                  8),  // str32 of 4 GiB
      std::string("\xc6\xff\xff\xff\xff"
                  "abc",
                  8),  // bin32 of 4 GiB
      std::string("\xc9\xff\xff\xff\xff\x01"
                  "abc",
                  9),                                  // ext32 of 4 GiB
      std::string("\xdd\xff\xff\xff\xff\xc0\xc0", 7),  // array32 of 4 G elements
      std::string("\xdf\xff\xff\xff\xff\xc0\xc0", 7),  // map32 of 4 G pairs
      std::string("\xde\x00\x02\xc0\xc0\xc0", 6),      // map16 of 2 pairs, 3 bytes follow
  };
  for (const std::string& bytes : cases) {
    MsgpackReader reader(bytes);
    CHECK_FALSE(reader.skip());
    CHECK(reader.error().find("truncated") != std::string_view::npos);
  }
  CHECK_FALSE(read1(cases[0], &MsgpackReader::read_str));
  CHECK_FALSE(read1(cases[3], &MsgpackReader::read_array_header));
}

TEST_CASE("the reserved byte 0xc1 is not a value", "[unit]") {
  const std::string bytes("\x92\x01\xc1", 3);
  MsgpackReader reader(bytes);
  CHECK_FALSE(reader.skip());
  CHECK(reader.error().find("0xc1") != std::string_view::npos);
}

TEST_CASE("nesting is limited to 64 containers", "[unit]") {
  CHECK(read1(nested_arrays(MsgpackReader::kMaxDepth), &MsgpackReader::skip));
  const std::string bytes = nested_arrays(MsgpackReader::kMaxDepth + 1);
  MsgpackReader too_deep(bytes);
  CHECK_FALSE(too_deep.skip());
  CHECK(too_deep.error().find("deeper than 64") != std::string_view::npos);
  const std::string empty_at_65 = std::string(64, '\x91') + "\x90";
  CHECK_FALSE(read1(empty_at_65, &MsgpackReader::skip));
}

TEST_CASE("100000 nested arrays are rejected without exhausting the stack", "[unit]") {
  const std::string deep = nested_arrays(100000);
  MsgpackReader reader(deep);
  CHECK_FALSE(reader.skip());
  CHECK_FALSE(single_value_problem(deep).empty());
  const std::string deep_maps = std::string(100000, '\x81') + std::string(1, '\xc0');
  CHECK_FALSE(read1(deep_maps, &MsgpackReader::skip));
}

TEST_CASE("single_value_problem reports empty input and trailing bytes", "[unit]") {
  CHECK(single_value_problem("") == "it is empty");
  CHECK(single_value_problem(Mp().i(1).i(2).bytes()).find("1 unexpected bytes") !=
        std::string::npos);
  CHECK(single_value_problem(Mp().map(0).bytes()).empty());
}

TEST_CASE("random bytes and mutated values never crash the reader", "[unit]") {
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> byte(0, 255);
  const std::string base = every_kind();
  for (int round = 0; round < 20000; ++round) {
    std::string bytes;
    if (round % 2 == 0) {
      bytes.resize(static_cast<std::size_t>(byte(rng) % 40));
      for (char& c : bytes) c = static_cast<char>(byte(rng));
    } else {
      bytes = base;
      for (int flips = 0; flips < 3; ++flips) {
        bytes[static_cast<std::size_t>(byte(rng)) % bytes.size()] = static_cast<char>(byte(rng));
      }
    }
    MsgpackReader reader(bytes);
    const auto span = reader.skip();
    if (span) {
      CHECK(span->size() <= bytes.size());
    } else {
      CHECK(reader.offset() == 0);
    }
  }
}

TEST_CASE("every type byte but 0xc1 names a kind", "[unit]") {
  for (int b = 0; b < 256; ++b) {
    const std::string bytes(1, static_cast<char>(b));
    INFO("type byte " << b);
    CHECK((read1(bytes, &MsgpackReader::peek) == MsgpackKind::invalid) == (b == 0xc1));
  }
  CHECK(read1(std::string(1, '\xcf'), &MsgpackReader::peek) == MsgpackKind::integer);
  CHECK(read1(std::string(1, '\xd3'), &MsgpackReader::peek) == MsgpackKind::integer);
  CHECK(read1(std::string(1, '\xd8'), &MsgpackReader::peek) == MsgpackKind::ext);
  CHECK(read1(std::string(1, '\xdf'), &MsgpackReader::peek) == MsgpackKind::map);
}
