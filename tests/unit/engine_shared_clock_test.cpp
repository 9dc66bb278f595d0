// The masters' shared clock: this machine's moved by its offset from Redis's, measured at each
// heartbeat, and moved only when a measurement rules the current offset out.
#include <catch2/catch.hpp>

#include "src/util/shared_clock.hpp"

using jq::SharedClock;
using namespace std::chrono_literals;

namespace {

// A local clock the test sets.
struct LocalClock {
  SharedClock::TimePoint at{std::chrono::milliseconds(1'800'000'000'000)};
  jq::SystemClock fn() {
    return [this] { return at; };
  }
};

std::int64_t us(SharedClock::TimePoint t) {
  return jq::epoch_us(t);
}

}  // namespace

TEST_CASE("the shared clock is this machine's until a measurement sets it", "[unit]") {
  LocalClock local;
  SharedClock clock(local.fn());
  CHECK_FALSE(clock.synced());
  CHECK(clock.now() == local.at);
}

TEST_CASE("the shared clock follows Redis's, whichever way this machine's is off", "[unit]") {
  LocalClock local;
  SharedClock clock(local.fn());
  const auto sent = local.at;
  local.at += 2ms;  // the round trip
  // Redis read its clock 30 s behind this machine's, in the middle of the round trip.
  REQUIRE(clock.observe(sent, us(sent + 1ms) - 30'000'000, local.at));
  CHECK(clock.synced());
  CHECK(clock.offset() == -30s);
  CHECK(us(clock.now()) == us(local.at) - 30'000'000);

  // A clock 5 s behind Redis's.
  const auto sent2 = local.at;
  local.at += 2ms;
  REQUIRE(clock.observe(sent2, us(sent2 + 1ms) + 5'000'000, local.at));
  CHECK(clock.offset() == 5s);
}

TEST_CASE("the shared clock does not jitter with each round trip", "[unit]") {
  LocalClock local;
  SharedClock clock(local.fn());
  const auto sent = local.at;
  local.at += 4ms;
  REQUIRE(clock.observe(sent, us(sent) + 2'000 + 1'000'000, local.at));  // 1 s, ± 2 ms
  CHECK(clock.offset() == 1s);

  // Later measurements that allow the current offset leave it alone.
  const auto sent2 = local.at;
  local.at += 4ms;
  CHECK_FALSE(clock.observe(sent2, us(sent2) + 1'000'000 + 3'500, local.at));
  CHECK(clock.offset() == 1s);
  // One that rules it out moves it to the middle of what it allows.
  const auto sent3 = local.at;
  local.at += 2ms;
  CHECK(clock.observe(sent3, us(sent3) + 1'000'000 + 5'000, local.at));
  CHECK(clock.offset() == 1s + 4ms);
}

TEST_CASE("a measurement whose round trip was too long or ran backwards is not used", "[unit]") {
  LocalClock local;
  SharedClock clock(local.fn());
  const auto sent = local.at;
  local.at += SharedClock::kMaxRoundTrip + 1ms;
  CHECK_FALSE(clock.observe(sent, us(sent) + 9'000'000, local.at));
  CHECK_FALSE(clock.synced());
  // This machine's clock stepped back during the call.
  CHECK_FALSE(clock.observe(local.at, us(local.at) + 9'000'000, local.at - 1s));
  CHECK(clock.offset() == 0s);
}
