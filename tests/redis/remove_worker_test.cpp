// removeWorker-4.lua: a worker's registration goes, with its url entry, slots and stats.
#include <catch2/catch.hpp>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::redis::Reply;
using jq::redis::bindings::RemoveWorker;

namespace {

RemoveWorker::Status remove_worker(SyncRedis& r, const jq::redis::Keys& keys,
                                   const std::string& id) {
  auto status = RemoveWorker::decode(
      r.eval(RemoveWorker::call(RemoveWorker::keys(keys, id), {id, keys.control_channel()})));
  REQUIRE(status);
  return *status;
}

// A registration as registerWorker stores it, with slots held and stats.
// `json_url` is the url as written in the JSON (escapes and all).
void put_worker(SyncRedis& r, const jq::redis::Keys& keys, const std::string& id,
                const std::string& url, const std::string& json_url = "") {
  r.call({"HSET", keys.workers(), id,
          R"({"url":")" + (json_url.empty() ? url : json_url) +
              R"(","names":["*"],"concurrency":4,"headers":{"X-Token":"t"},"ttl_ms":0,)"
              R"("registered_at_ms":1,"expires_at_ms":0})"});
  r.call({"HSET", keys.worker_urls(), url, id});
  r.call({"HSET", keys.worker_slots(id), "m1", "2"});
  r.call({"HSET", keys.worker_stats(id), "dispatched", "7"});
}

}  // namespace

TEST_CASE("removing a worker drops its registration, url entry, slots and stats", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  put_worker(r, keys, "w1", "http://a:8080/jobs?x=\"1\"", R"(http:\/\/a:8080\/jobs?x=\"1\")");
  put_worker(r, keys, "w2", "http://b/");

  CHECK(remove_worker(r, keys, "w1") == RemoveWorker::Status::removed);
  // The url came out of the registration's JSON (escapes decoded).
  CHECK(hgetall(r, keys.worker_urls()) == std::map<std::string, std::string>{{"http://b/", "w2"}});
  CHECK_FALSE(hget(r, keys.workers(), "w1"));
  CHECK(hget(r, keys.workers(), "w2"));
  CHECK_FALSE(exists(r, keys.worker_slots("w1")));
  CHECK_FALSE(exists(r, keys.worker_stats("w1")));
  CHECK(exists(r, keys.worker_slots("w2")));
  CHECK(exists(r, keys.worker_stats("w2")));
  CHECK(events.take(r) == std::vector<std::string>{"w"});
}

TEST_CASE("removing an unknown worker answers -1 and announces nothing", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  put_worker(r, keys, "w1", "http://a/");

  CHECK(remove_worker(r, keys, "w9") == RemoveWorker::Status::not_found);
  CHECK(r.call({"HLEN", keys.workers()}).integer == 1);
  CHECK(events.take(r).empty());
}

TEST_CASE("a url entry that names another worker now is left alone", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  put_worker(r, keys, "w1", "http://a/");
  r.call({"HSET", keys.worker_urls(), "http://a/", "w5"});

  CHECK(remove_worker(r, keys, "w1") == RemoveWorker::Status::removed);
  CHECK(hgetall(r, keys.worker_urls()) == std::map<std::string, std::string>{{"http://a/", "w5"}});
}

TEST_CASE("a registration that is not valid JSON is removed all the same", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  r.call({"HSET", keys.workers(), "w1", "{not json"});

  CHECK(remove_worker(r, keys, "w1") == RemoveWorker::Status::removed);
  CHECK_FALSE(exists(r, keys.workers()));
}
