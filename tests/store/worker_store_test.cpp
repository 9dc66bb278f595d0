// WorkerStore called directly against a real Redis: registrations, slot leases shared by two
// masters, heartbeats and lapsed registrations.
#include <catch2/catch.hpp>

#include "src/workers/worker_store.hpp"
#include "tests/store/store_test_support.hpp"

using jq::api::WorkerRegistration;
using jq::workers::WorkerStore;
using namespace jq::test;
using namespace std::chrono_literals;

namespace {

WorkerRegistration registration(std::string url, int concurrency = 4) {
  WorkerRegistration r;
  r.url = std::move(url);
  r.names = {"mail"};
  r.concurrency = concurrency;
  return r;
}

struct Fixture {
  StoreHarness h{shared_redis().port()};
  TestClock clock{kEpoch};
  jq::redis::Keys keys = fresh_keys();
  WorkerStore one{h.client(), keys, clock.fn(), "master-1"};
  WorkerStore two{h.client(), keys, clock.fn(), "master-2"};
};

}  // namespace

TEST_CASE("WorkerStore: registering a url again keeps its id, removal forgets it", "[redis]") {
  Fixture f;
  auto first = f.h.run(f.one.add(registration("http://127.0.0.1:9001/")));
  REQUIRE(first);
  CHECK(first->created);
  auto again = f.h.run(f.two.add(registration("http://127.0.0.1:9001/", 8)));
  REQUIRE(again);
  CHECK_FALSE(again->created);
  CHECK(again->id == first->id);
  auto all = f.h.run(f.one.load_all());
  REQUIRE(all);
  REQUIRE(all->size() == 1);
  CHECK(all->front().concurrency == 8);
  CHECK(all->front().serves("mail"));
  CHECK_FALSE(all->front().serves("resize"));
  REQUIRE(f.h.run(f.one.remove(first->id)));
  CHECK(f.h.run(f.one.load_all())->empty());
}

TEST_CASE("WorkerStore: a secret of any bytes is kept until a registration without one",
          "[redis]") {
  Fixture f;
  // Not UTF-8, with a NUL: the registration JSON must still carry it exactly.
  const std::string secret("\xff\xfe\x00secret-bytes-0123", 20);
  WorkerRegistration r = registration("http://127.0.0.1:9003/");
  r.secret = secret;
  REQUIRE(f.h.run(f.one.add(r)));
  auto all = f.h.run(f.two.load_all());
  REQUIRE(all);
  REQUIRE(all->size() == 1);
  CHECK(all->front().secret == secret);
  REQUIRE(f.h.run(f.one.add(registration("http://127.0.0.1:9003/"))));
  CHECK(f.h.run(f.two.load_all())->front().secret.empty());
}

TEST_CASE("WorkerStore: two masters never hold more slots than the concurrency", "[redis]") {
  Fixture f;
  const std::string id = f.h.run(f.one.add(registration("http://127.0.0.1:9002/", 5)))->id;
  f.h.run(f.one.heartbeat());
  f.h.run(f.two.heartbeat());
  CHECK(*f.h.run(f.one.acquire(id, 3, 5)) == 3);
  CHECK(*f.h.run(f.two.acquire(id, 3, 5)) == 2);
  CHECK(*f.h.run(f.two.acquire(id, 1, 5)) == 0);
  REQUIRE(f.h.run(f.one.release(id, 2)));
  CHECK(*f.h.run(f.two.acquire(id, 4, 5)) == 2);
}

TEST_CASE("WorkerStore: a silent master's slots are freed for the others", "[redis]") {
  Fixture f;
  const std::string id = f.h.run(f.one.add(registration("http://127.0.0.1:9003/", 2)))->id;
  CHECK(*f.h.run(f.one.acquire(id, 2, 2)) == 2);
  CHECK(*f.h.run(f.two.acquire(id, 1, 2)) == 0);
  // master-1 stops beating; master-2 goes on past its heartbeat's lapse.
  f.clock.advance(jq::workers::kHeartbeatTtl + 1ms);
  f.h.run(f.two.heartbeat());
  CHECK(*f.h.run(f.two.acquire(id, 2, 2)) == 2);
}

TEST_CASE("WorkerStore: a registration with a ttl lapses unless posted again", "[redis]") {
  Fixture f;
  auto beating = registration("http://127.0.0.1:9004/");
  beating.ttl = 10'000ms;
  f.h.run(f.one.add(beating));
  f.h.run(f.one.add(registration("http://127.0.0.1:9005/")));  // no ttl: stays
  f.clock.advance(9'000ms);
  f.h.run(f.one.add(beating));  // the heartbeat
  f.clock.advance(9'000ms);
  f.h.run(f.one.expire());
  CHECK(f.h.run(f.one.load_all())->size() == 2);
  f.clock.advance(1'001ms);
  f.h.run(f.one.expire());
  auto left = f.h.run(f.one.load_all());
  REQUIRE(left->size() == 1);
  CHECK(left->front().url == "http://127.0.0.1:9005/");
}
