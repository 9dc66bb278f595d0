// registerWorker-3.lua: a url gets an id once and keeps it across re-registrations.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
using jq::redis::bindings::RegisterWorker;
using jq::redis::bindings::RemoveWorker;

namespace {

std::string registration(const std::string& url, int concurrency = 8) {
  return R"({"url":")" + url + R"(","names":["email"],"concurrency":)" +
         std::to_string(concurrency) +
         R"(,"headers":{},"ttl_ms":0,"registered_at_ms":1700000000123,"expires_at_ms":0})";
}

// {id, created}
std::pair<std::string, std::int64_t> register_worker(SyncRedis& r, const jq::redis::Keys& keys,
                                                     const std::string& url,
                                                     const std::string& json) {
  Reply reply =
      r.eval(RegisterWorker::call(RegisterWorker::keys(keys), {url, json, keys.control_channel()}));
  REQUIRE(RegisterWorker::decode(reply));
  REQUIRE(reply.is_array());
  REQUIRE(reply.elements.size() == 2);
  REQUIRE(reply.elements[0].type == Reply::Type::string);
  REQUIRE(reply.elements[1].is_integer());
  return {reply.elements[0].str, reply.elements[1].integer};
}

}  // namespace

TEST_CASE("a new url is registered under a new id and announced", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  const std::string json = registration("http://a:9000/run");

  CHECK(register_worker(r, keys, "http://a:9000/run", json) ==
        std::pair<std::string, std::int64_t>{"w1", 1});
  CHECK(hgetall(r, keys.workers()) == std::map<std::string, std::string>{{"w1", json}});
  CHECK(hgetall(r, keys.worker_urls()) ==
        std::map<std::string, std::string>{{"http://a:9000/run", "w1"}});
  CHECK(events.take(r) == std::vector<std::string>{"w"});
}

TEST_CASE("registering a url again updates it and keeps its id", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  register_worker(r, keys, "http://a/", registration("http://a/", 8));
  events.take(r);
  const std::string updated = registration("http://a/", 32);

  CHECK(register_worker(r, keys, "http://a/", updated) ==
        std::pair<std::string, std::int64_t>{"w1", 0});
  CHECK(hgetall(r, keys.workers()) == std::map<std::string, std::string>{{"w1", updated}});
  CHECK(r.call({"HLEN", keys.worker_urls()}).integer == 1);
  CHECK(r.call({"GET", keys.worker_seq()}).str == "1");
  CHECK(events.take(r) == std::vector<std::string>{"w"});
}

TEST_CASE("different urls get increasing ids that are never reused", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  CHECK(register_worker(r, keys, "http://a/", registration("http://a/")).first == "w1");
  CHECK(register_worker(r, keys, "http://b/", registration("http://b/")).first == "w2");
  r.eval(RemoveWorker::call(RemoveWorker::keys(keys, "w2"), {"w2", keys.control_channel()}));
  CHECK(register_worker(r, keys, "http://b/", registration("http://b/")) ==
        std::pair<std::string, std::int64_t>{"w3", 1});
  CHECK(hgetall(r, keys.worker_urls()) ==
        std::map<std::string, std::string>{{"http://a/", "w1"}, {"http://b/", "w3"}});
}
