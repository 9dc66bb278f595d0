// POST/GET/DELETE /v1/jobs and GET /v1/jobs/{id}/result against the real daemon and Redis.
#include <catch2/catch.hpp>

#include "src/redis/keys.hpp"
#include "src/store/job_id.hpp"
#include "src/store/job_record.hpp"
#include "tests/support/daemon.hpp"
#include "tests/support/records.hpp"
#include "tests/support/redis_server.hpp"

using jq::test::Daemon;
using jq::test::DaemonOptions;
using jq::test::HttpClient;
using jq::test::RedisServer;
using jq::test::SyncRedis;
using nlohmann::json;
using namespace std::string_literals;

namespace {

constexpr int kShards = 4;

struct Fixture {
  RedisServer redis;
  Daemon daemon{DaemonOptions{redis.url(), kShards}};
  HttpClient http = daemon.http();
  SyncRedis check{redis.port()};

  long long stored_jobs() {
    long long total = 0;
    for (int s = 0; s < kShards; ++s) total += jq::test::record_count(check, jq::redis::Keys{}, s);
    return total;
  }

  // Finishes a job as completion does: the record moves to its done key with `result`.
  void finish(const std::string& id, const std::string& result) {
    auto parsed = *jq::store::parse_job_id(id, kShards);
    jq::redis::Keys keys;
    const auto at = jq::test::record_at(check, keys, parsed.shard, parsed.field);
    check.call({"EVAL",
                "local r = cmsgpack.unpack(redis.call('HGET', KEYS[1], ARGV[1])) r[7] = 4 "
                "r[13] = ARGV[2] redis.call('SET', KEYS[2], cmsgpack.pack(r)) "
                "redis.call('HDEL', KEYS[1], ARGV[1])",
                "2", at.bucket, keys.done(parsed.shard, parsed.field), at.slot, result});
  }

  jq::store::JobRecord record(const std::string& id) {
    auto parsed = jq::store::parse_job_id(id, kShards);
    REQUIRE(parsed);
    auto rec = jq::test::read_record(check, jq::redis::Keys{}, parsed->shard, parsed->field);
    REQUIRE(rec);
    return *rec;
  }
};

}  // namespace

TEST_CASE("a JSON job is stored, readable, and answered in JSON", "[http]") {
  Fixture f;
  auto pushed = f.http.post("/v1/jobs", {{"name", "email.send"},
                                         {"argument", {{"to", "a@example.com"}}},
                                         {"priority", -7},
                                         {"keep_result", true},
                                         {"timeout", 2.5}});
  REQUIRE(pushed.status == 201);
  CHECK(pushed.header("content-type") == "application/json");
  const std::string id = pushed.value()["id"];
  CHECK(id.size() <= 64);

  auto got = f.http.get("/v1/jobs/" + id);
  REQUIRE(got.status == 200);
  json job = got.value();
  CHECK(job["id"] == id);
  CHECK(job["name"] == "email.send");
  CHECK(job["priority"] == -7);
  CHECK(job["max_retry"] == 3);
  CHECK(job["keep_result"] == true);
  CHECK(job["timeout"] == 2.5);
  CHECK(job["state"] == "queued");
  CHECK(job["attempts"] == 0);
  CHECK(job["enqueued_at"].get<std::string>().ends_with("Z"));
  CHECK_FALSE(job.contains("last_error"));
}

TEST_CASE("a MessagePack job keeps its argument byte for byte and is answered in MessagePack",
          "[http]") {
  Fixture f;
  // A non-canonical argument: 5 as int32, then a bin value; re-encoding would change the bytes.
  const std::string argument = std::string("\x92\xd2\x00\x00\x00\x05\xc4\x02\x00\xff", 10);
  std::string body =
      "\x82\xa4name\xa3"
      "abc\xa8"
      "argument";
  body += argument;
  auto pushed = f.http.post_msgpack("/v1/jobs", body);
  REQUIRE(pushed.status == 201);
  CHECK(pushed.header("content-type") == "application/msgpack");
  const std::string id = pushed.value()["id"];
  CHECK(f.record(id).argument == argument);

  auto no_accept = f.http.request("GET", "/v1/jobs/" + id);  // no Accept, no body: JSON
  CHECK(no_accept.header("content-type") == "application/json");
  CHECK(nlohmann::json::parse(no_accept.body)["name"] == "abc");
  auto asked = f.http.request("GET", "/v1/jobs/" + id, "", {{"Accept", "application/msgpack"}});
  CHECK(asked.header("content-type") == "application/msgpack");
  CHECK(asked.value()["name"] == "abc");
}

TEST_CASE("the response encoding follows Accept, then the request's own encoding", "[http]") {
  Fixture f;
  const std::string job = R"({"name":"n"})";
  auto json_in_msgpack_out =
      f.http.request("POST", "/v1/jobs", job,
                     {{"Content-Type", "application/json"}, {"Accept", "application/msgpack"}});
  CHECK(json_in_msgpack_out.status == 201);
  CHECK(json_in_msgpack_out.header("content-type") == "application/msgpack");
  auto x_msgpack =
      f.http.request("POST", "/v1/jobs", std::string("\x81\xa4name\xa1n", 8),
                     {{"Content-Type", "application/x-msgpack"}, {"Accept", "application/json"}});
  CHECK(x_msgpack.status == 201);
  CHECK(x_msgpack.header("content-type") == "application/json");
  auto msgpack_no_accept =
      f.http.request("POST", "/v1/jobs", std::string("\x81\xa4name\xa1n", 8),
                     {{"Content-Type", "application/msgpack"}, {"Accept", "*/*"}});
  CHECK(msgpack_no_accept.header("content-type") == "application/msgpack");
  auto json_preferred = f.http.request("GET", "/v1/stats", "",
                                       {{"Accept", "application/msgpack;q=0.5, application/json"}});
  CHECK(json_preferred.header("content-type") == "application/json");
}

TEST_CASE("curl, browsers and generated clients that send no Accept get JSON", "[http]") {
  Fixture f;
  for (const std::string accept : {"", "*/*", "text/html,application/xhtml+xml,*/*;q=0.8"}) {
    INFO("Accept: " << accept);
    auto res = accept.empty() ? f.http.request("GET", "/v1/stats")
                              : f.http.request("GET", "/v1/stats", "", {{"Accept", accept}});
    CHECK(res.status == 200);
    CHECK(res.header("content-type") == "application/json");
    CHECK(nlohmann::json::parse(res.body).contains("pushed"));
  }
  auto missing = f.http.request("GET", "/v1/jobs/0-zzzzzzzzz");
  CHECK(missing.status == 404);
  CHECK(nlohmann::json::parse(missing.body)["error"] == "not_found");
}

TEST_CASE("a JSON integer beyond 64 bits is refused naming the field, and nothing is stored",
          "[http]") {
  Fixture f;
  auto one = f.http.request("POST", "/v1/jobs",
                            R"({"name":"n","argument":123456789012345678901234567890})",
                            {{"Content-Type", "application/json"}});
  CHECK(one.status == 400);
  CHECK(one.header("content-type") == "application/json");
  CHECK(one.value()["error"] == "bad_request");
  CHECK(one.value()["field"] == "argument");
  auto batch = f.http.request("POST", "/v1/jobs",
                              R"([{"name":"n"},{"name":"n","argument":[18446744073709551616]}])",
                              {{"Content-Type", "application/json"}});
  CHECK(batch.status == 400);
  CHECK(batch.value()["field"] == "argument");
  CHECK(batch.value()["index"] == 1);
  CHECK(f.http.get("/v1/stats").value()["pushed"] == 0);
}

TEST_CASE("a batch answers ids in order and stores every job", "[http]") {
  Fixture f;
  json batch = json::array();
  for (int i = 0; i < 50; ++i)
    batch.push_back({{"name", "n" + std::to_string(i)}, {"priority", i}});
  auto pushed = f.http.post("/v1/jobs", batch);
  REQUIRE(pushed.status == 201);
  auto ids = pushed.value()["ids"];
  REQUIRE(ids.size() == 50);
  for (int i = 0; i < 50; ++i) {
    auto job = f.http.get("/v1/jobs/" + ids[i].get<std::string>()).value();
    CHECK(job["name"] == "n" + std::to_string(i));
    CHECK(job["priority"] == i);
  }
  CHECK(f.stored_jobs() == 50);
}

TEST_CASE("consecutive pushes share a shard for shard_run requests, then move on", "[http]") {
  RedisServer redis;
  DaemonOptions options{redis.url(), kShards};
  options.shard_run = 3;
  Daemon daemon(options);
  auto http = daemon.http();
  std::vector<int> shards;
  for (int i = 0; i < 7; ++i) {
    auto res = http.post("/v1/jobs", json{{"name", "run"}});
    REQUIRE(res.status == 201);
    auto parsed = jq::store::parse_job_id(res.value()["id"].get<std::string>(), kShards);
    REQUIRE(parsed);
    shards.push_back(parsed->shard);
  }
  CHECK(shards == std::vector<int>{0, 0, 0, 1, 1, 1, 2});
}

TEST_CASE("a batch with one bad job stores nothing and names its index and field", "[http]") {
  Fixture f;
  json batch = json::array();
  for (int i = 0; i < 10; ++i) batch.push_back({{"name", "ok"}});
  batch[6]["max_retries"] = 2;
  auto res = f.http.post("/v1/jobs", batch);
  REQUIRE(res.status == 400);
  json err = res.value();
  CHECK(err["error"] == "invalid_job");
  CHECK(err["index"] == 6);
  CHECK(err["field"] == "max_retries");
  CHECK_FALSE(err["message"].get<std::string>().empty());
  CHECK(f.stored_jobs() == 0);
}

TEST_CASE("bad bodies get a clear 4xx in the error shape and nothing is stored", "[http]") {
  Fixture f;
  SECTION("garbage bytes as MessagePack") {
    auto res = f.http.post_msgpack("/v1/jobs", std::string("\xc1\xff\x00garbage", 10),
                                   {{"Accept", "application/json"}});
    CHECK(res.status == 400);
    CHECK(res.value()["error"] == "bad_request");
  }
  SECTION("invalid JSON") {
    auto res =
        f.http.request("POST", "/v1/jobs", "{\"name\": ", {{"Content-Type", "application/json"}});
    CHECK(res.status == 400);
    CHECK(res.value()["error"] == "bad_request");
  }
  SECTION("a wrong content type") {
    auto res = f.http.request(
        "POST", "/v1/jobs", "name=x",
        {{"Content-Type", "application/x-www-form-urlencoded"}, {"Accept", "application/json"}});
    CHECK(res.status == 415);
    CHECK(res.value()["error"] == "unsupported_media_type");
  }
  SECTION("a body over limits.max_body_bytes") {
    json big = {{"name", "big"}, {"argument", std::string(2 * 1024 * 1024, 'x')}};
    auto res = f.http.post("/v1/jobs", big);
    CHECK(res.status == 413);
    CHECK(res.value()["error"] == "payload_too_large");
  }
  SECTION("a field out of range") {
    auto res = f.http.post("/v1/jobs", {{"name", "x"}, {"priority", 2147483648LL}});
    CHECK(res.status == 400);
    CHECK(res.value()["field"] == "priority");
  }
  SECTION("a name with a bad character") {
    auto res = f.http.post("/v1/jobs", {{"name", "a/b"}});
    CHECK(res.status == 400);
    CHECK(res.value()["field"] == "name");
  }
  SECTION("an empty batch") {
    auto res = f.http.post("/v1/jobs", json::array());
    CHECK(res.status == 400);
    CHECK(res.value()["error"] == "bad_request");
  }
  CHECK(f.stored_jobs() == 0);
  CHECK(f.http.get("/healthz").status == 200);  // and the daemon is still there
}

TEST_CASE("a queued job can be cancelled once, and unknown ids are 404", "[http]") {
  Fixture f;
  const std::string id = f.http.post("/v1/jobs", {{"name", "n"}}).value()["id"];
  CHECK(f.http.del("/v1/jobs/" + id).status == 204);
  CHECK(f.http.get("/v1/jobs/" + id).status == 404);
  auto again = f.http.del("/v1/jobs/" + id);
  CHECK(again.status == 404);
  CHECK(again.value()["error"] == "not_found");
  CHECK(f.http.del("/v1/jobs/not-an-id").status == 404);
  CHECK(f.http.get("/v1/jobs/99-000000001").status == 404);
  CHECK(f.stored_jobs() == 0);
}

TEST_CASE("a running job cannot be cancelled", "[http]") {
  Fixture f;
  const std::string id = f.http.post("/v1/jobs", {{"name", "n"}}).value()["id"];
  // Mark it running the way a reservation does (dispatch is another issue's work).
  auto parsed = *jq::store::parse_job_id(id, kShards);
  const auto at = jq::test::record_at(f.check, jq::redis::Keys{}, parsed.shard, parsed.field);
  f.check.call({"EVAL",
                "local r = cmsgpack.unpack(redis.call('HGET', KEYS[1], ARGV[1])) r[7] = 3 "
                "redis.call('HSET', KEYS[1], ARGV[1], cmsgpack.pack(r))",
                "1", at.bucket, at.slot});
  auto res = f.http.del("/v1/jobs/" + id);
  CHECK(res.status == 409);
  CHECK(res.value()["error"] == "conflict");
  CHECK(f.http.get("/v1/jobs/" + id).value()["state"] == "running");
}

TEST_CASE("a result is 202 while pending, the result once, then nil", "[http]") {
  Fixture f;
  const std::string id =
      f.http.post("/v1/jobs", {{"name", "n"}, {"keep_result", true}}).value()["id"];
  auto pending = f.http.get("/v1/jobs/" + id + "/result");
  CHECK(pending.status == 202);
  CHECK(pending.value() == json{{"id", id}, {"state", "queued"}, {"attempts", 0}});

  const std::string result =
      "\x83\xa4type\xa7success\xab"
      "finished_at\xb4"
      "2026-01-01T00:00:00Z\xa6result\xc4\x01\x07"s;
  f.finish(id, result);
  CHECK(f.http.get("/v1/jobs/" + id).value()["state"] == "succeeded");

  auto as_msgpack =
      f.http.request("GET", "/v1/jobs/" + id + "/result", "", {{"Accept", "application/msgpack"}});
  CHECK(as_msgpack.status == 200);
  CHECK(as_msgpack.body == result);  // exactly as the worker sent it
  auto gone = f.http.get("/v1/jobs/" + id + "/result");
  CHECK(gone.status == 200);
  CHECK(gone.body == "null");
  CHECK(f.http.get("/v1/jobs/" + id).status == 404);
}

TEST_CASE("HEAD of a result is refused and leaves the result for the GET", "[http]") {
  Fixture f;
  const std::string id =
      f.http.post("/v1/jobs", {{"name", "n"}, {"keep_result", true}}).value()["id"];
  const std::string result =
      "\x83\xa4type\xa7success\xab"
      "finished_at\xb4"
      "2026-01-01T00:00:00Z\xa6result\xc4\x01\x07"s;
  f.finish(id, result);
  jq::test::RawConnection head(f.daemon.port());
  REQUIRE(head.send("HEAD /v1/jobs/" + id +
                    "/result HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::string refused = head.read_until_closed(std::chrono::seconds(5));
  CHECK(refused.starts_with("HTTP/1.1 405"));
  CHECK(refused.find("Allow: GET") != std::string::npos);
  auto fetched =
      f.http.request("GET", "/v1/jobs/" + id + "/result", "", {{"Accept", "application/msgpack"}});
  CHECK(fetched.status == 200);
  CHECK(fetched.body == result);
}

TEST_CASE("a kept result in JSON shows binary values as $bin", "[http]") {
  Fixture f;
  const std::string id =
      f.http.post("/v1/jobs", {{"name", "n"}, {"keep_result", true}}).value()["id"];
  const std::string result = "\x82\xa4type\xa7success\xa6result\xc4\x02\x00\xff"s;
  f.finish(id, result);
  auto res = f.http.get("/v1/jobs/" + id + "/result");
  REQUIRE(res.status == 200);
  CHECK(res.value() == json{{"type", "success"}, {"result", {{"$bin", "AP8="}}}});
}

TEST_CASE("results of unknown ids and bad wait values", "[http]") {
  Fixture f;
  auto unknown = f.http.get("/v1/jobs/1-000000abc/result");
  CHECK(unknown.status == 200);
  CHECK(unknown.body == "null");
  CHECK(f.http.get("/v1/jobs/garbage/result").body == "null");
  for (const std::string wait : {"61", "nan", "NaN", "-nan", "nan(1)", "1e309", "-1", "abc"}) {
    INFO("wait=" << wait);
    auto bad_wait = f.http.get("/v1/jobs/1-000000abc/result?wait=" + wait);
    CHECK(bad_wait.status == 400);
    CHECK(bad_wait.value()["error"] == "bad_request");
    CHECK(bad_wait.value()["field"] == "wait");
  }
}

TEST_CASE("unknown routes are 404 and known paths with another method are 405", "[http]") {
  Fixture f;
  auto missing = f.http.get("/v2/nothing");
  CHECK(missing.status == 404);
  CHECK(missing.value()["error"] == "not_found");
  auto wrong = f.http.request("PUT", "/v1/jobs", "", {{"Accept", "application/json"}});
  CHECK(wrong.status == 405);
  CHECK(wrong.header("allow") == "POST, GET");
}
