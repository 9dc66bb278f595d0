// INFO memory as the master reads it (src/redis/memory_info.hpp): over the limit exactly when
// Redis would refuse writes, and the eviction policy.
#include <catch2/catch.hpp>

#include "src/redis/memory_info.hpp"

using jq::redis::parse_memory_info;

namespace {

std::string info(const std::string& used, const std::string& max,
                 const std::string& not_counted = "0", const std::string& policy = "noeviction") {
  return "# Memory\r\nused_memory:" + used + "\r\nused_memory_human:2.09M\r\nmaxmemory:" + max +
         "\r\nmaxmemory_human:0B\r\nmaxmemory_policy:" + policy +
         "\r\nmem_not_counted_for_evict:" + not_counted + "\r\n";
}

}  // namespace

TEST_CASE("INFO memory is read into used, maxmemory and the policy", "[unit]") {
  auto m = parse_memory_info(info("2191096", "1000000", "0", "allkeys-lru"));
  REQUIRE(m);
  CHECK(m->used == 2191096);
  CHECK(m->max == 1000000);
  CHECK(m->policy == "allkeys-lru");
  CHECK(m->over_limit());
}

TEST_CASE("Redis is over its limit only with a limit, and not counting its own buffers", "[unit]") {
  CHECK_FALSE(parse_memory_info(info("2191096", "0"))->over_limit());  // no maxmemory
  CHECK_FALSE(parse_memory_info(info("1000000", "1000000"))->over_limit());
  CHECK(parse_memory_info(info("1000001", "1000000"))->over_limit());
  CHECK_FALSE(parse_memory_info(info("1000500", "1000000", "600"))->over_limit());
}

TEST_CASE("an INFO answer without the memory fields is not read", "[unit]") {
  CHECK_FALSE(parse_memory_info(""));
  CHECK_FALSE(parse_memory_info("# Server\r\nredis_version:7.0.15\r\n"));
  CHECK_FALSE(parse_memory_info(info("lots", "0")));
}
