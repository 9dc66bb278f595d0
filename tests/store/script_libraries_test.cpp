// ScriptLibraries: the script library of a build whose masters all stopped beating long ago is
// deleted from Redis with its record; this build's, a recent one's and an unrecorded one stay.
#include <catch2/catch.hpp>

#include <string>

#include "src/redis/bindings/beat_master.hpp"
#include "src/redis/script_sources.hpp"
#include "src/store/script_libraries.hpp"
#include "tests/redis/script_test_support.hpp"
#include "tests/store/store_test_support.hpp"

using namespace jq::test;
using jq::store::ScriptLibraries;

namespace {

// A library named like a build's, with one function: what FUNCTION LIST shows of a build.
void load_library(SyncRedis& r, const std::string& name) {
  REQUIRE(r.call({"FUNCTION", "LOAD", "REPLACE", minimal_library_source(name)}).str == name);
}

bool has_library(SyncRedis& r, const std::string& name) {
  return !r.call({"FUNCTION", "LIST", "LIBRARYNAME", name}).elements.empty();
}

}  // namespace

TEST_CASE("a script library no master has beaten with for long is deleted, with its record",
          "[store]") {
  auto& redis = shared_redis();
  SyncRedis r(redis.port());
  const jq::redis::Keys keys = fresh_keys();
  // Names no other test loads: the libraries are Redis-wide, the records under this prefix.
  const std::string old = "jq_5c01d0000001", recent = "jq_5c01d0000002",
                    unrecorded = "jq_5c01d0000003";
  const std::string own(jq::redis::library_name());
  for (const auto& name : {old, recent, unrecorded}) load_library(r, name);
  constexpr std::int64_t kCutoff = 1'800'000'000'000;
  auto beat = [&](const std::string& library, std::int64_t expiry) {
    using jq::redis::bindings::BeatMaster;
    REQUIRE(BeatMaster::decode(
        r.eval(BeatMaster::call(BeatMaster::keys(keys), {"m-" + library, expiry, library}))));
  };
  beat(old, kCutoff - 1);
  beat(recent, kCutoff + 1);
  beat(own, kCutoff - 1);  // a clock far ahead must not delete the library this master runs

  StoreHarness h(redis.port());
  ScriptLibraries libraries(h.client(), keys);
  CHECK(h.run(libraries.sweep(kCutoff)) == 1);
  CHECK_FALSE(has_library(r, old));
  CHECK(has_library(r, recent));
  CHECK(has_library(r, unrecorded));
  CHECK(has_library(r, own));
  CHECK_FALSE(zscore(r, keys.libraries(), old).has_value());
  CHECK(zscore(r, keys.libraries(), recent) == kCutoff + 1);

  // Another master's sweep after this one (or a library gone already): nothing left to delete.
  beat(old, kCutoff - 1);
  CHECK(h.run(libraries.sweep(kCutoff)) == 1);
  CHECK_FALSE(zscore(r, keys.libraries(), old).has_value());
  for (const auto& name : {recent, unrecorded}) r.call({"FUNCTION", "DELETE", name});
}

TEST_CASE("a library that Redis refuses to delete keeps its record, for a later sweep", "[store]") {
  RedisServer redis;  // its own: the test changes the ACL
  SyncRedis r(redis.port());
  REQUIRE(r.call({"ACL", "SETUSER", "jq", "on", ">secret", "~*", "&*", "+@all", "-function|delete"})
              .str == "OK");
  const jq::redis::Keys keys = fresh_keys();
  const std::string old = "jq_5c01d0000004";
  load_library(r, old);
  r.call({"ZADD", keys.libraries(), "1", old});
  StoreHarness h("redis://jq:secret@127.0.0.1:" + std::to_string(redis.port()) + "/0");
  ScriptLibraries libraries(h.client(), keys);
  CHECK(h.run(libraries.sweep(1000)) == 0);
  CHECK(has_library(r, old));
  CHECK(zscore(r, keys.libraries(), old) == 1);
}
