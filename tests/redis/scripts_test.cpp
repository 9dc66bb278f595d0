// The compiled-in scripts as Redis sees them: each loads, under the sha1 the engine computed.
#include <catch2/catch.hpp>

#include <regex>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::ScriptId;
using jq::redis::bindings::InitStore;

namespace {

// The largest i in any KEYS[i] of a script's source.
std::size_t highest_key_index(std::string_view source) {
  static const std::regex key_ref(R"(KEYS\[(\d+)\])");
  std::size_t highest = 0;
  std::string text(source);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), key_ref);
       it != std::sregex_iterator(); ++it) {
    highest = std::max<std::size_t>(highest, std::stoul((*it)[1].str()));
  }
  return highest;
}

}  // namespace

TEST_CASE("every script loads and SCRIPT LOAD answers the sha1 the engine computed", "[redis]") {
  SyncRedis r(shared_redis().port());
  REQUIRE(jq::redis::all_scripts().size() == 41);
  for (const jq::redis::Script& s : jq::redis::all_scripts()) {
    INFO(s.file);
    auto reply = r.call({"SCRIPT", "LOAD", std::string(s.source)});
    REQUIRE(reply.type == jq::redis::Reply::Type::string);
    CHECK(reply.str == s.sha1);
    CHECK(s.sha1.size() == 40);
  }
}

TEST_CASE("each script is found by its id and uses exactly the keys its file name counts",
          "[redis]") {
  for (const jq::redis::Script& s : jq::redis::all_scripts()) {
    INFO(s.file);
    CHECK(&jq::redis::script(s.id) == &s);
    CHECK(highest_key_index(s.source) == s.num_keys);
    CHECK(s.source.find("local rcall = redis.call") != std::string_view::npos);
  }
  CHECK(jq::redis::script(ScriptId::push_jobs).file == "pushJobs-10");
  CHECK(jq::redis::script(ScriptId::cancel_job).num_keys == 8);
}

TEST_CASE(
    "every script declares in its first line, and says in its header, whether it runs "
    "while Redis is over maxmemory",
    "[redis]") {
  // The shebang is what Redis reads (only on the first line); the header is what people read.
  const std::vector<std::pair<std::string_view, std::string_view>> kinds = {
      {"#!lua\n", "Memory: refused while Redis is over maxmemory, before it writes anything: "},
      {"#!lua flags=allow-oom\n", "Memory: runs while Redis is over maxmemory (allow-oom): "},
      {"#!lua flags=no-writes\n", "Memory: reads only (no-writes), so it runs while Redis is "},
  };
  for (const jq::redis::Script& s : jq::redis::all_scripts()) {
    INFO(s.file);
    const auto kind = std::find_if(kinds.begin(), kinds.end(),
                                   [&](const auto& k) { return s.source.starts_with(k.first); });
    REQUIRE(kind != kinds.end());
    CHECK(s.source.find(kind->second) != std::string_view::npos);
  }
}

TEST_CASE("scripts still run after SCRIPT FLUSH, through the EVAL fallback", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const auto& init = jq::redis::script(ScriptId::init_store);
  r.call({"SCRIPT", "LOAD", std::string(init.source)});
  REQUIRE(r.call({"SCRIPT", "FLUSH"}).str == "OK");
  auto missing = r.call({"EVALSHA", init.sha1, "1", keys.meta(), "4", "1"});
  REQUIRE(missing.is_error());
  CHECK(missing.str.starts_with("NOSCRIPT"));

  auto reply = r.eval(InitStore::call(InitStore::keys(keys), {4, 1, 2}));
  CHECK(integers(reply) == std::vector<std::int64_t>{4, 2});
  CHECK(fields_of(push_jobs(r, keys, 0, {{}})) == std::vector<std::string>{"000000001"});
}
