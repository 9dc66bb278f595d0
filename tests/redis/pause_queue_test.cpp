// pauseQueue-1.lua: pauses or resumes a queue and announces it, whether or not it changed.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::bindings::PauseQueue;

namespace {

PauseQueue::Status pause_queue(SyncRedis& r, const jq::redis::Keys& keys, const std::string& name,
                               bool pause) {
  auto status = PauseQueue::decode(
      r.eval(PauseQueue::call(PauseQueue::keys(keys), {name, pause, keys.control_channel()})));
  REQUIRE(status);
  return *status;
}

std::vector<std::string> paused(SyncRedis& r, const jq::redis::Keys& keys) {
  std::vector<std::string> names;
  for (const auto& n : r.call({"SMEMBERS", keys.paused()}).elements) names.push_back(n.str);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("pausing a queue adds its name to the paused set and announces it", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);

  CHECK(pause_queue(r, keys, "email", true) == PauseQueue::Status::changed);
  CHECK(pause_queue(r, keys, "resize", true) == PauseQueue::Status::changed);
  CHECK(paused(r, keys) == std::vector<std::string>{"email", "resize"});
  CHECK(events.take(r) == std::vector<std::string>{"q", "q"});
}

TEST_CASE("pausing a paused queue changes nothing but still announces", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  pause_queue(r, keys, "email", true);
  EventListener events(shared_redis().port(), keys);

  CHECK(pause_queue(r, keys, "email", true) == PauseQueue::Status::unchanged);
  CHECK(paused(r, keys) == std::vector<std::string>{"email"});
  CHECK(events.take(r) == std::vector<std::string>{"q"});
}

TEST_CASE("resuming a queue removes only its name and announces it", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  pause_queue(r, keys, "email", true);
  pause_queue(r, keys, "resize", true);
  EventListener events(shared_redis().port(), keys);

  CHECK(pause_queue(r, keys, "email", false) == PauseQueue::Status::changed);
  CHECK(paused(r, keys) == std::vector<std::string>{"resize"});
  CHECK(events.take(r) == std::vector<std::string>{"q"});
}

TEST_CASE("resuming a queue that is not paused changes nothing but still announces", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);

  CHECK(pause_queue(r, keys, "email", false) == PauseQueue::Status::unchanged);
  CHECK_FALSE(exists(r, keys.paused()));
  CHECK(events.take(r) == std::vector<std::string>{"q"});
}
