// The masters' shared clock: Redis's, as measured at each heartbeat, carried on by this machine's
// steady clock; moved only when a measurement rules the current offset out.
#include <catch2/catch.hpp>

#include "src/util/shared_clock.hpp"

using jq::SharedClock;
using namespace std::chrono_literals;

namespace {

// The machine's two clocks, set by the test: the wall clock 30 s ahead of Redis's.
struct Machine {
  SharedClock::TimePoint wall{std::chrono::milliseconds(1'800'000'030'000)};
  SharedClock::SteadyPoint steady{std::chrono::seconds(5000)};
  SharedClock clock{[this] { return wall; }, [this] { return steady; }};

  void pass(std::chrono::microseconds d) {
    wall += d;
    steady += d;
  }
  // Redis's clock now, in microseconds since the epoch: 30 s behind this machine's.
  std::int64_t redis_us() const { return jq::epoch_us(wall) - 30'000'000; }
};

}  // namespace

TEST_CASE("the shared clock is this machine's until a measurement sets it", "[unit]") {
  Machine m;
  CHECK_FALSE(m.clock.synced());
  CHECK(m.clock.now() == m.wall);
  CHECK(m.clock.wall_ahead() == 0s);
}

TEST_CASE("the shared clock follows Redis's, and a step of this machine's clock changes nothing",
          "[unit]") {
  Machine m;
  const auto sent = m.clock.steady_now();
  m.pass(1ms);
  const std::int64_t redis_us = m.redis_us();  // read in the middle of the round trip
  m.pass(1ms);
  REQUIRE(m.clock.observe(sent, redis_us, m.clock.steady_now()));
  CHECK(m.clock.synced());
  CHECK(jq::epoch_us(m.clock.now()) == m.redis_us());
  CHECK(m.clock.wall_ahead() == 30s);

  m.pass(10s);
  CHECK(jq::epoch_us(m.clock.now()) == m.redis_us());
  // NTP steps this machine's wall clock back by a minute: the shared clock goes on.
  m.wall -= 60s;
  CHECK(jq::epoch_us(m.clock.now()) == m.redis_us() + 60'000'000);
  CHECK(m.clock.wall_ahead() == -30s);
}

TEST_CASE("the shared clock moves only as far as a measurement makes it", "[unit]") {
  Machine m;
  const auto t0 = m.clock.steady_now();
  m.pass(4ms);
  REQUIRE(m.clock.observe(t0, m.redis_us() - 2'000, m.clock.steady_now()));  // ± 2 ms
  const auto offset = m.clock.offset();

  // Measurements that allow the current offset leave it alone, however long their round trip.
  const auto t1 = m.clock.steady_now();
  m.pass(300ms);
  CHECK_FALSE(m.clock.observe(t1, m.redis_us() - 100'000, m.clock.steady_now()));
  CHECK(m.clock.offset() == offset);
  // One that rules it out moves it to its nearer end: Redis's clock ran 5 ms ahead since.
  const auto t2 = m.clock.steady_now();
  m.pass(2ms);
  CHECK(m.clock.observe(t2, m.redis_us() + 5'000, m.clock.steady_now()));
  CHECK(m.clock.offset() == offset + 5ms);
}

TEST_CASE("a measurement whose round trip was too long or ran backwards is not used", "[unit]") {
  Machine m;
  const auto sent = m.clock.steady_now();
  m.pass(SharedClock::kMaxRoundTrip + 1ms);
  CHECK_FALSE(m.clock.observe(sent, m.redis_us(), m.clock.steady_now()));
  CHECK_FALSE(m.clock.synced());
  CHECK_FALSE(m.clock.observe(m.clock.steady_now(), m.redis_us(), sent));
  CHECK_FALSE(m.clock.synced());
}
