// The compiled-in scripts as Redis sees them: one function library, a function per script with
// the flags of its first line.
#include <catch2/catch.hpp>

#include <regex>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
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

// The flags a script's first line declares ("#!lua flags=a,b"), sorted.
std::vector<std::string> declared_flags(std::string_view source) {
  const std::string_view line = source.substr(0, source.find('\n'));
  std::vector<std::string> flags;
  const std::string_view tag = "flags=";
  const auto at = line.find(tag);
  if (at == std::string_view::npos) return flags;
  std::string_view rest = line.substr(at + tag.size());
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    flags.emplace_back(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  std::sort(flags.begin(), flags.end());
  return flags;
}

}  // namespace

TEST_CASE("the script library loads, with one function per script and the flags its file declares",
          "[redis]") {
  RedisServer redis;
  SyncRedis r(redis.port());
  REQUIRE(jq::redis::all_scripts().size() == 44);
  const std::string name(jq::redis::library_name());
  CHECK(name.size() == 15);  // jq_ and 12 hex digits of the library's SHA1
  REQUIRE(r.call({"FUNCTION", "LOAD", std::string(jq::redis::library_source())}).str == name);
  // A second load (another master of the same build) finds it there.
  CHECK(jq::redis::library_loaded(
      r.call({"FUNCTION", "LOAD", std::string(jq::redis::library_source())})));
  // RESP2: one library, as [key, value, ...] with "functions" a list of [name, n, description,
  // d, flags, [...]].
  const Reply listed = r.call({"FUNCTION", "LIST", "LIBRARYNAME", name});
  REQUIRE(listed.elements.size() == 1);
  std::map<std::string, std::vector<std::string>> functions;
  const auto& library = listed.elements[0].elements;
  for (std::size_t i = 0; i + 1 < library.size(); i += 2) {
    if (library[i].str != "functions") continue;
    for (const Reply& f : library[i + 1].elements) {
      std::vector<std::string> flags;
      for (const Reply& flag : f.elements.at(5).elements) flags.push_back(flag.str);
      std::sort(flags.begin(), flags.end());
      functions[f.elements.at(1).str] = flags;
    }
  }
  CHECK(functions.size() == jq::redis::all_scripts().size());
  for (const jq::redis::Script& s : jq::redis::all_scripts()) {
    INFO(s.file);
    REQUIRE(functions.contains(s.function));
    CHECK(functions[s.function] == declared_flags(s.source));
  }
}

TEST_CASE("each script is found by its id and uses exactly the keys its file name counts",
          "[redis]") {
  for (const jq::redis::Script& s : jq::redis::all_scripts()) {
    INFO(s.file);
    CHECK(&jq::redis::script(s.id) == &s);
    CHECK(highest_key_index(s.source) == s.num_keys);
    CHECK(s.function == std::string(jq::redis::library_name()) + "_" +
                            std::string(s.file.substr(0, s.file.find('-'))));
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

TEST_CASE("scripts still run after FUNCTION FLUSH, the library loaded again", "[redis]") {
  RedisServer redis;
  SyncRedis r(redis.port());
  auto keys = fresh_keys();
  const auto& init = jq::redis::script(ScriptId::init_store);
  r.call({"FUNCTION", "LOAD", std::string(jq::redis::library_source())});
  REQUIRE(r.call({"FUNCTION", "FLUSH"}).str == "OK");
  auto missing = r.call({"FCALL", init.function, "1", keys.meta(), "4", "1"});
  CHECK(jq::redis::lost_library(missing));

  auto reply = r.eval(InitStore::call(InitStore::keys(keys), {4, 1, 2}));
  CHECK(integers(reply) == std::vector<std::int64_t>{4, 2});
  CHECK(fields_of(push_jobs(r, keys, 0, {{}})) == std::vector<std::string>{"000000001"});
}
