// Redis's error replies that mean "not now" (src/redis/errc.hpp): which are refusals, and the
// names they are counted under in jq_redis_errors_total.
#include <catch2/catch.hpp>

#include <algorithm>

#include "src/redis/errc.hpp"

using jq::redis::Errc;
using jq::redis::error_kind;
using jq::redis::refusal_of;

TEST_CASE("refusals are recognised by the error reply's first word", "[unit]") {
  CHECK(refusal_of("OOM command not allowed when used memory > 'maxmemory'.") ==
        Errc::out_of_memory);
  CHECK(refusal_of("OOM command not allowed when used memory > 'maxmemory'. script: 3041, on "
                   "@user_script:1.") == Errc::out_of_memory);
  CHECK(refusal_of("LOADING Redis is loading the dataset in memory") == Errc::loading);
  CHECK(refusal_of("BUSY Redis is busy running a script.") == Errc::busy);
  CHECK(refusal_of("READONLY You can't write against a read only replica.") == Errc::read_only);
  CHECK(refusal_of("MISCONF Redis is configured to save RDB snapshots") == Errc::cannot_persist);
  // Errors of the command itself, or words that only begin like a refusal.
  CHECK_FALSE(refusal_of("ERR user_script:12: attempt to compare nil with number"));
  CHECK_FALSE(refusal_of("BUSYKEY Target key name already exists."));
  CHECK_FALSE(refusal_of("NOSCRIPT No matching script."));
  CHECK_FALSE(refusal_of(""));
}

TEST_CASE("every failure of a Redis call has a metric kind, the client's own stop excepted",
          "[unit]") {
  CHECK(error_kind(Errc::out_of_memory) == "oom");
  CHECK(error_kind(Errc::connection_lost) == "connection_lost");
  CHECK(error_kind(Errc::shutting_down).empty());
  CHECK(error_kind(std::make_error_code(std::errc::timed_out)).empty());
  const auto kinds = jq::redis::error_kinds();
  CHECK(std::find(kinds.begin(), kinds.end(), "oom") != kinds.end());
  CHECK(std::find(kinds.begin(), kinds.end(), "") == kinds.end());
  CHECK(kinds.size() == 15);
  CHECK(std::error_code(Errc::out_of_memory).message().find("out of memory") != std::string::npos);
}
