// Job ids "<shard>-<field>": the shard comes back out of the id, and nothing else parses.
#include <catch2/catch.hpp>

#include "src/store/job_id.hpp"

using jq::store::JobId;
using jq::store::parse_job_id;

TEST_CASE("a job id round-trips through str and parse_job_id", "[unit]") {
  for (const JobId& id :
       {JobId{0, "000000001"}, JobId{15, "00000000z"}, JobId{9999, "AbCdEfGh9"}}) {
    auto parsed = parse_job_id(id.str(), 10000);
    REQUIRE(parsed);
    CHECK(parsed->shard == id.shard);
    CHECK(parsed->field == id.field);
  }
  CHECK(JobId{7, "00000000A"}.str() == "7-00000000A");
}

TEST_CASE("a job id's shard must be below the store's shard count", "[unit]") {
  CHECK(parse_job_id("15-000000001", 16));
  CHECK_FALSE(parse_job_id("16-000000001", 16));
  CHECK_FALSE(parse_job_id("1-000000001", 1));
  CHECK_FALSE(parse_job_id("-1-000000001", 16));
  CHECK_FALSE(parse_job_id("+1-000000001", 16));
  CHECK_FALSE(parse_job_id("10000-000000001", 100000));
}

TEST_CASE("a job id's shard has no leading zeros", "[unit]") {
  CHECK(parse_job_id("0-000000001", 16));
  CHECK_FALSE(parse_job_id("00-000000001", 16));
  CHECK_FALSE(parse_job_id("01-000000001", 16));
}

TEST_CASE("a job id's field is exactly nine letters or digits", "[unit]") {
  CHECK_FALSE(parse_job_id("1-00000001", 16));
  CHECK_FALSE(parse_job_id("1-0000000001", 16));
  CHECK_FALSE(parse_job_id("1-", 16));
  CHECK_FALSE(parse_job_id("1-0000000_1", 16));
  CHECK_FALSE(parse_job_id("1-00000000_", 16));
  CHECK_FALSE(parse_job_id("1-0000-0001", 16));
  CHECK_FALSE(parse_job_id("1-0000 0001", 16));
  CHECK_FALSE(parse_job_id("1-0000000\xc3\xa9", 16));
  CHECK_FALSE(parse_job_id(std::string_view("1-0000\0000001", 11), 16));
}

TEST_CASE("text that is not shard-dash-field is no job id", "[unit]") {
  CHECK_FALSE(parse_job_id("", 16));
  CHECK_FALSE(parse_job_id("1000000001", 16));
  CHECK_FALSE(parse_job_id("-000000001", 16));
  CHECK_FALSE(parse_job_id("a-000000001", 16));
  CHECK_FALSE(parse_job_id(" 1-000000001", 16));
}
