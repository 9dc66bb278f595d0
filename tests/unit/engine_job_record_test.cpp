// decode_record: the 13-slot MessagePack array the Lua scripts store for each job.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>

#include "api_test_msgpack.hpp"
#include "src/store/job_record.hpp"

using jq::api::test::Mp;
using jq::store::decode_record;
using jq::store::JobState;

namespace {

// A record as cmsgpack writes it; `state` and the slot count are the parts tests vary.
std::string record(std::int64_t state, std::uint32_t slots = 13) {
  Mp mp;
  mp.array(slots)
      .str("resize")
      .str(std::string("\x92\x00\xc0", 3))
      .i(std::numeric_limits<std::int32_t>::min())
      .i(5)
      .i(1)
      .i(30000)
      .i(state)
      .i(2)
      .i(1700000000123)
      .str("0000000010000000A1")
      .str("worker said no")
      .str("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
      .str(std::string("\x81\xa2ok\xc3", 5));
  for (std::uint32_t extra = 13; extra < slots; ++extra) mp.nil();
  return mp.bytes();
}

}  // namespace

TEST_CASE("decode_record reads every slot of a record", "[unit]") {
  auto rec = decode_record(record(3));
  REQUIRE(rec);
  CHECK(rec->name == "resize");
  CHECK(rec->argument == std::string("\x92\x00\xc0", 3));
  CHECK(rec->priority == std::numeric_limits<std::int32_t>::min());
  CHECK(rec->max_retry == 5);
  CHECK(rec->keep_result);
  CHECK(rec->timeout_ms == 30000);
  CHECK(rec->state == JobState::running);
  CHECK(rec->attempts == 2);
  CHECK(rec->enqueued_at_ms == 1700000000123);
  CHECK(rec->last_error == "worker said no");
  CHECK(rec->traceparent == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  CHECK(rec->result == std::string("\x81\xa2ok\xc3", 5));
}

TEST_CASE("decode_record reads every state number", "[unit]") {
  const auto [number, state] = GENERATE(table<int, JobState>({{1, JobState::queued},
                                                              {2, JobState::scheduled},
                                                              {3, JobState::running},
                                                              {4, JobState::succeeded},
                                                              {5, JobState::dead}}));
  auto rec = decode_record(record(number));
  REQUIRE(rec);
  CHECK(rec->state == state);
}

TEST_CASE("decode_record reads the encodings cmsgpack may choose", "[unit]") {
  // Numbers as floats or in their widest integer forms, strings as bin: the decoder must not
  // depend on which encoding the packer picked for a value.
  const std::string packed = Mp().array(13)
                                 .bin("email")
                                 .bin("")
                                 .i32(std::numeric_limits<std::int32_t>::max())
                                 .f64(3.0)
                                 .i(0)
                                 .f64(1500.0)
                                 .f64(1.0)
                                 .u(0)
                                 .u(1700000000123)
                                 .str("")
                                 .str("")
                                 .str("")
                                 .str("");
  auto rec = decode_record(packed);
  REQUIRE(rec);
  CHECK(rec->name == "email");
  CHECK(rec->argument.empty());
  CHECK(rec->priority == std::numeric_limits<std::int32_t>::max());
  CHECK(rec->max_retry == 3);
  CHECK_FALSE(rec->keep_result);
  CHECK(rec->timeout_ms == 1500);
  CHECK(rec->state == JobState::queued);
  CHECK(rec->enqueued_at_ms == 1700000000123);
  CHECK(rec->result.empty());
}

TEST_CASE("decode_record accepts slots added after the thirteenth", "[unit]") {
  auto rec = decode_record(record(1, 15));
  REQUIRE(rec);
  CHECK(rec->name == "resize");
}

TEST_CASE("decode_record reads a record that ends at its last slot holding something", "[unit]") {
  // pack_record leaves out trailing "none" slots: a unique job's record may end at slot 14.
  std::string bytes = record(1, 14);
  bytes.pop_back();
  bytes += Mp().str("invoice:42").bytes();
  const auto rec = decode_record(bytes);
  REQUIRE(rec);
  CHECK(rec->unique_key == "invoice:42");
  CHECK(rec->ordering_key.empty());
  CHECK(rec->ready_at_ms == 0);
  CHECK(rec->blocked_by.empty());
}

TEST_CASE("decode_record reads the schedule a job was made by, from slot 20", "[unit]") {
  // record(1, 20) ends in seven nils (slots 14-20); the last becomes [name, scheduled_at].
  std::string bytes = record(1, 20);
  bytes.pop_back();
  bytes += Mp().array(2).str("nightly").str("2026-03-29T03:00:00+02:00").bytes();
  const auto rec = decode_record(bytes);
  REQUIRE(rec);
  CHECK(rec->schedule == "nightly");
  CHECK(rec->scheduled_at == "2026-03-29T03:00:00+02:00");
  const auto pushed = decode_record(record(1, 20));
  REQUIRE(pushed);
  CHECK(pushed->schedule.empty());
}

TEST_CASE("decode_record rejects what is not an array", "[unit]") {
  CHECK_FALSE(decode_record(Mp().map(1).str("name").str("x").bytes()));
  CHECK_FALSE(decode_record(Mp().str("resize").bytes()));
  CHECK_FALSE(decode_record(Mp().i(3).bytes()));
  CHECK_FALSE(decode_record(Mp().nil().bytes()));
}

TEST_CASE("decode_record rejects an array with fewer than 13 slots", "[unit]") {
  CHECK_FALSE(decode_record(Mp().array(0).bytes()));
  Mp twelve;
  twelve.array(12);
  for (int i = 0; i < 12; ++i) twelve.i(1);
  CHECK_FALSE(decode_record(twelve.bytes()));
}

TEST_CASE("decode_record rejects a state number that is no state", "[unit]") {
  for (std::int64_t bad : std::initializer_list<std::int64_t>{0, 6, -1, 255, 1LL << 40}) {
    INFO(bad);
    CHECK_FALSE(decode_record(record(bad)));
  }
  Mp string_state;
  string_state.array(13).str("n").str("").i(0).i(0).i(0).i(0).str("queued");
  for (int i = 0; i < 6; ++i) string_state.i(0);
  CHECK_FALSE(decode_record(string_state.bytes()));
}

TEST_CASE("decode_record rejects bytes that are not MessagePack", "[unit]") {
  CHECK_FALSE(decode_record(""));
  const std::string whole = record(1);
  CHECK_FALSE(decode_record(whole.substr(0, whole.size() - 1)));
  CHECK_FALSE(decode_record("\xc1"));
}

TEST_CASE("an appended argument counts its values, and constraints match its last one", "[unit]") {
  const std::string last = Mp().map(1).str("tenant").str("B").bytes();
  const std::string list = Mp().array(3).i(1).str("two").raw(last).bytes();
  Mp mp;
  mp.array(21).str("sync").str(list);
  for (int slot = 3; slot <= 13; ++slot) mp.i(slot == 7 ? 1 : 0);  // slot 7: state queued
  for (int slot = 14; slot <= 20; ++slot) mp.nil();                // ... R_SCHEDULE
  mp.i(3);                                                         // R_APPENDED
  auto rec = decode_record(mp.bytes());
  REQUIRE(rec);
  CHECK(rec->argument == list);
  CHECK(rec->appended == 3);
  CHECK(jq::store::match_argument(*rec) == last);

  rec->appended = 0;  // a pushed value, even an array, is matched whole
  CHECK(jq::store::match_argument(*rec) == list);
  CHECK(decode_record(record(1, 20))->appended == 0);  // records from before slot 21
}
