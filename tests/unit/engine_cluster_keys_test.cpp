// On Redis Cluster a script may only touch keys of one hash slot. Every binding's KEYS, built
// share one slot: the shard's ({7}), the control plane's ({w}) or
// the constraints' ({c}). (redis::Client refuses a call that breaks this before sending it.)
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "src/redis/bindings/all.hpp"
#include "src/redis/slot.hpp"

namespace {

using namespace jq::redis;
using namespace jq::redis::bindings;

template <class B>
std::set<int> slots_of(const Keys& k) {
  typename B::Keys keys;
  if constexpr (requires { B::keys(k, 7, std::string_view("name")); }) {
    keys = B::keys(k, 7, std::string_view("name"));
  } else if constexpr (requires { B::keys(k, 7); }) {
    keys = B::keys(k, 7);
  } else if constexpr (requires { B::keys(k, std::string_view("name")); }) {
    keys = B::keys(k, std::string_view("name"));
  } else {
    keys = B::keys(k);
  }
  const ScriptCall call = B::call(std::move(keys), typename B::Args{});
  std::set<int> slots;
  for (const std::string& key : call.keys) slots.insert(key_slot(key));
  return slots;
}

template <class... B>
void check_all(List<B...>, const Keys& k) {
  (
      [&] {
        INFO(script(B::id).file);
        CHECK(slots_of<B>(k).size() == 1);
      }(),
      ...);
}

}  // namespace

TEST_CASE("every script's keys are in one hash slot", "[unit]") {
  check_all(All{}, Keys("jq"));
}
