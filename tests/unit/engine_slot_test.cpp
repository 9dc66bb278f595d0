#include <catch2/catch.hpp>

#include "src/redis/slot.hpp"

using jq::redis::crc16_xmodem;
using jq::redis::hash_tag;
using jq::redis::key_slot;

TEST_CASE("crc16_xmodem gives the check value of the CRC-16/XMODEM catalogue", "[unit]") {
  CHECK(crc16_xmodem("123456789") == 0x31C3);
  CHECK(crc16_xmodem("") == 0);
}

// The answers of `CLUSTER KEYSLOT <key>` from redis-server 7.0 (cluster-enabled).
TEST_CASE("key_slot agrees with Redis's CLUSTER KEYSLOT", "[unit]") {
  CHECK(key_slot("foo") == 12182);
  CHECK(key_slot("bar") == 5061);
  CHECK(key_slot("123456789") == 12739);
  CHECK(key_slot("") == 0);
  CHECK(key_slot("jq:meta") == 8957);
  CHECK(key_slot("jq:{0}:inflight") == 13907);
  CHECK(key_slot("jq:{15}:jobs:") == 4178);
  CHECK(key_slot("jq:{7}:events") == 1716);
  CHECK(key_slot("jq:{w}:workers") == 3696);
  CHECK(key_slot("jq:{c}:constraints") == 7365);
}

TEST_CASE("key_slot hashes only the first non-empty hash tag", "[unit]") {
  CHECK(key_slot("{user1000}.following") == 3443);
  CHECK(key_slot("{user1000}.followers") == 3443);
  CHECK(key_slot("foo{bar}{zap}") == 5061);  // "bar"
  CHECK(key_slot("foo{}{bar}") == 8363);     // an empty first tag: the whole key
  CHECK(key_slot("foo{{bar}}zap") == 4015);  // the tag is "{bar"
  CHECK(key_slot("{}") == 15257);
  CHECK(hash_tag("foo{{bar}}zap") == "{bar");
  CHECK(hash_tag("no tag") == "no tag");
  CHECK(hash_tag("open{only") == "open{only");
}
