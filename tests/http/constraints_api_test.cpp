// /v1/constraints against the real daemon and Redis: every documented status with its exact
// error fields, the live state read from the keys the dispatch side will keep (written here
// directly, as it would), and the config file's constraints applied at start.
#include <catch2/catch.hpp>

#include <fstream>

#include "src/redis/keys.hpp"
#include "src/util/time.hpp"
#include "tests/support/daemon.hpp"
#include "tests/support/redis_server.hpp"

using jq::test::Daemon;
using jq::test::DaemonOptions;
using jq::test::HttpClient;
using jq::test::HttpResult;
using jq::test::RedisServer;
using jq::test::SyncRedis;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

json mail() {
  return json::parse(R"({"name":"mail-per-tenant","match":{"name":"mail.*","argument":[
    {"path":"/kind","equals":"newsletter"},{"path":"/tenant","exists":true},
    {"path":"/region","in":["eu","us"]}]},"key":"/tenant","concurrency":5,
    "rate":{"limit":100,"period":60,"burst":10}})");
}

// mail() as the API answers it: every field, absent ones null.
json mail_view() {
  json v = mail();
  v["paused"] = false;
  return v;
}

struct Fixture {
  RedisServer redis;
  Daemon daemon{DaemonOptions{redis.url(), 4}};
  HttpClient http = daemon.http();
  SyncRedis check{redis.port()};
  jq::redis::Keys keys;

  HttpResult send(const std::string& method, const std::string& target, const json& body) const {
    return http.request(method, target, body.dump(),
                        {{"Content-Type", "application/json"}, {"Accept", "application/json"}});
  }
  HttpResult create(const json& body) const { return send("POST", "/v1/constraints", body); }
};

void check_error(const HttpResult& res, int status, const std::string& code,
                 const std::optional<std::string>& field = std::nullopt) {
  INFO(res.body);
  CHECK(res.status == status);
  const json body = res.value();
  CHECK(body["error"] == code);
  CHECK_FALSE(body["message"].get<std::string>().empty());
  if (field) {
    CHECK(body["field"] == *field);
  } else {
    CHECK_FALSE(body.contains("field"));
  }
}

}  // namespace

TEST_CASE("POST /v1/constraints answers 201 with the object and GET reads it back", "[http]") {
  Fixture f;
  auto created = f.create(mail());
  REQUIRE(created.status == 201);
  CHECK(created.value() == mail_view());

  auto list = f.http.get("/v1/constraints");
  REQUIRE(list.status == 200);
  CHECK(list.value() == json::array({mail_view()}));

  auto one = f.http.get("/v1/constraints/mail-per-tenant");
  REQUIRE(one.status == 200);
  json expected = mail_view();
  expected["waiting"] = 0;
  expected["running"] = 0;
  expected["keys"] = 0;
  expected["top_keys"] = json::array();
  CHECK(one.value() == expected);
}

TEST_CASE("constraints are taken and answered in MessagePack too", "[http]") {
  Fixture f;
  const auto body =
      json::to_msgpack(json{{"name", "bin"}, {"match", {{"name", "*"}}}, {"concurrency", 2}});
  auto created = f.http.post_msgpack("/v1/constraints", std::string(body.begin(), body.end()));
  REQUIRE(created.status == 201);
  CHECK(created.header("content-type") == "application/msgpack");
  CHECK(created.value()["concurrency"] == 2);
  CHECK(created.value()["key"].is_null());
  CHECK(created.value()["match"] == json{{"name", "*"}, {"argument", json::array()}});
}

TEST_CASE("a constraint name that is taken is a 409", "[http]") {
  Fixture f;
  REQUIRE(f.create(mail()).status == 201);
  auto again = f.create(mail());
  check_error(again, 409, "conflict");
  CHECK(again.value()["message"].get<std::string>().find("PUT /v1/constraints/mail-per-tenant") !=
        std::string::npos);
}

TEST_CASE("an invalid constraint is a 400 naming the field by its path", "[http]") {
  Fixture f;
  json bad_path = mail();
  bad_path["match"]["argument"][1]["path"] = "tenant";
  check_error(f.create(bad_path), 400, "invalid_job", "match.argument[1].path");

  json bad_period = mail();
  bad_period["rate"]["period"] = 0;
  check_error(f.create(bad_period), 400, "invalid_job", "rate.period");

  json bad_glob = mail();
  bad_glob["match"]["name"] = "mail/*";
  check_error(f.create(bad_glob), 400, "invalid_job", "match.name");

  json two_kinds = mail();
  two_kinds["match"]["argument"][0]["in"] = json::array({"x"});
  check_error(f.create(two_kinds), 400, "invalid_job", "match.argument[0].in");

  json unknown = mail();
  unknown["rate"]["bursts"] = 1;
  check_error(f.create(unknown), 400, "invalid_job", "rate.bursts");

  check_error(f.create(json{{"match", {{"name", "*"}}}}), 400, "invalid_job", "name");
  check_error(f.create(json{{"name", "a b"}, {"match", {{"name", "*"}}}}), 400, "invalid_job",
              "name");
  check_error(f.create(json{{"name", "c"}, {"match", {{"name", "*"}}}, {"concurrency", 0}}), 400,
              "invalid_job", "concurrency");
  check_error(f.create(json::array()), 400, "bad_request");
  check_error(
      f.http.request("POST", "/v1/constraints", "{", {{"Content-Type", "application/json"}}), 400,
      "bad_request");
  check_error(f.http.request("POST", "/v1/constraints", "name=c",
                             {{"Content-Type", "text/plain"}, {"Accept", "application/json"}}),
              415, "unsupported_media_type");
  CHECK(f.http.get("/v1/constraints").value() == json::array());  // nothing was stored
}

TEST_CASE("an unknown constraint name is a 404 for GET, PUT, PATCH and DELETE", "[http]") {
  Fixture f;
  check_error(f.http.get("/v1/constraints/nope"), 404, "not_found");
  json body = mail();
  body["name"] = "nope";
  check_error(f.send("PUT", "/v1/constraints/nope", body), 404, "not_found");
  check_error(f.send("PATCH", "/v1/constraints/nope", json{{"paused", true}}), 404, "not_found");
  check_error(
      f.http.request("DELETE", "/v1/constraints/nope", "", {{"Accept", "application/json"}}), 404,
      "not_found");
  CHECK(f.http.get("/v1/constraints").value() == json::array());  // PUT created nothing
}

TEST_CASE("PUT replaces the whole constraint and refuses another name", "[http]") {
  Fixture f;
  REQUIRE(f.create(mail()).status == 201);
  const json replacement = {
      {"name", "mail-per-tenant"}, {"match", {{"name", "mail.send"}}}, {"paused", true}};
  auto replaced = f.send("PUT", "/v1/constraints/mail-per-tenant", replacement);
  REQUIRE(replaced.status == 200);
  const json view = {{"name", "mail-per-tenant"},
                     {"match", {{"name", "mail.send"}, {"argument", json::array()}}},
                     {"key", nullptr},
                     {"concurrency", nullptr},
                     {"rate", nullptr},
                     {"paused", true}};
  CHECK(replaced.value() == view);
  CHECK(f.http.get("/v1/constraints").value() == json::array({view}));

  json renamed = replacement;
  renamed["name"] = "other";
  auto refused = f.send("PUT", "/v1/constraints/mail-per-tenant", renamed);
  check_error(refused, 400, "invalid_job", "name");
  json bad = replacement;
  bad["rate"] = {{"limit", 1}, {"period", -1}};
  check_error(f.send("PUT", "/v1/constraints/mail-per-tenant", bad), 400, "invalid_job",
              "rate.period");
  CHECK(f.http.get("/v1/constraints").value() == json::array({view}));  // unchanged
}

TEST_CASE("PATCH changes only the fields given and null removes an optional one", "[http]") {
  Fixture f;
  REQUIRE(f.create(mail()).status == 201);
  auto patched = f.send("PATCH", "/v1/constraints/mail-per-tenant",
                        json{{"concurrency", 7}, {"paused", true}});
  REQUIRE(patched.status == 200);
  json expected = mail_view();
  expected["concurrency"] = 7;
  expected["paused"] = true;
  CHECK(patched.value() == expected);

  auto removed =
      f.send("PATCH", "/v1/constraints/mail-per-tenant", json{{"rate", nullptr}, {"key", nullptr}});
  REQUIRE(removed.status == 200);
  expected["rate"] = nullptr;
  expected["key"] = nullptr;
  CHECK(removed.value() == expected);
  CHECK(f.http.get("/v1/constraints").value() == json::array({expected}));

  check_error(f.send("PATCH", "/v1/constraints/mail-per-tenant", json{{"match", nullptr}}), 400,
              "invalid_job", "match");
  check_error(f.send("PATCH", "/v1/constraints/mail-per-tenant", json{{"name", "other"}}), 400,
              "invalid_job", "name");
  check_error(f.send("PATCH", "/v1/constraints/mail-per-tenant",
                     json::parse(R"({"match":{"name":"*","argument":[{"path":"/a"}]}})")),
              400, "invalid_job", "match.argument[0]");
}

TEST_CASE("DELETE answers 204 and the constraint is gone", "[http]") {
  Fixture f;
  REQUIRE(f.create(mail()).status == 201);
  auto removed = f.http.request("DELETE", "/v1/constraints/mail-per-tenant", "",
                                {{"Accept", "application/json"}});
  CHECK(removed.status == 204);
  CHECK(removed.body.empty());
  check_error(f.http.get("/v1/constraints/mail-per-tenant"), 404, "not_found");
  CHECK(f.create(mail()).status == 201);  // the name is free again
}

TEST_CASE("GET of a constraint shows the live state the dispatch side keeps in Redis", "[http]") {
  Fixture f;
  REQUIRE(f.create(mail()).status == 201);
  const std::string name = "mail-per-tenant";
  const std::int64_t now = jq::epoch_ms(std::chrono::system_clock::now());
  // Held jobs are counted in their shards (the daemon runs 4).
  f.check.call({"HSET", f.keys.held_waiting(0, name), "acme", "2", "globex", "1"});
  f.check.call({"HSET", f.keys.held_waiting(3, name), "acme", "1"});
  f.check.call({"SADD", f.keys.constraint_lease_keys(name), "acme", "initech"});
  const std::string live = std::to_string(now + 60'000);
  f.check.call({"ZADD", f.keys.constraint_lease(name, "acme"), live, "a1", live, "a2"});
  f.check.call({"ZADD", f.keys.constraint_lease(name, "initech"), live, "i1",
                std::to_string(now - 1000), "expired"});
  // A rate of 100 per 60 s with a burst of 10 allows a start 6 s before the tat.
  const std::int64_t tat = now + 3'600'000;
  f.check.call({"SET", f.keys.constraint_tat(name, "acme"), std::to_string(tat)});

  auto one = f.http.get("/v1/constraints/" + name);
  REQUIRE(one.status == 200);
  const json v = one.value();
  CHECK(v["name"] == name);
  CHECK(v["waiting"] == 4);
  CHECK(v["running"] == 3);
  CHECK(v["keys"] == 3);
  REQUIRE(v["top_keys"].size() == 3);
  CHECK(v["top_keys"][0] == json{{"key", "acme"},
                                 {"waiting", 3},
                                 {"running", 2},
                                 {"next_start_at", jq::iso8601_utc(tat - 6'000)}});
  CHECK(v["top_keys"][1] ==
        json{{"key", "globex"}, {"waiting", 1}, {"running", 0}, {"next_start_at", nullptr}});
  CHECK(v["top_keys"][2] ==
        json{{"key", "initech"}, {"waiting", 0}, {"running", 1}, {"next_start_at", nullptr}});
}

TEST_CASE("constraints in the config file are created or replaced at start", "[http]") {
  RedisServer redis;
  SyncRedis check(redis.port());
  jq::redis::Keys keys;
  {
    Daemon first{DaemonOptions{redis.url(), 4}};
    auto created = first.http().request("POST", "/v1/constraints",
                                        R"({"name":"fixed","match":{"name":"*"},"concurrency":1})",
                                        {{"Content-Type", "application/json"}});
    REQUIRE(created.status == 201);
  }
  const std::string yaml =
      "constraints:\n"
      "  - {name: fixed, match: {name: 'report.*'}, concurrency: 3}\n"
      "  - name: fresh\n"
      "    match: {name: '*', argument: [{path: /tenant, exists: true}]}\n"
      "    key: /tenant\n"
      "    rate: {limit: 10, period: 1}\n";
  Daemon daemon{DaemonOptions{redis.url(), 4, yaml}};
  const HttpClient http = daemon.http();
  REQUIRE(
      jq::test::wait_until([&] { return http.get("/v1/constraints").value().size() == 2; }, 5s));
  const json list = http.get("/v1/constraints").value();
  CHECK(list[0]["name"] == "fixed");
  CHECK(list[0]["match"]["name"] == "report.*");
  CHECK(list[0]["concurrency"] == 3);
  CHECK(list[1]["name"] == "fresh");
  CHECK(list[1]["rate"] == json{{"limit", 10}, {"period", 1}, {"burst", 0}});
}

TEST_CASE("a bad constraint in the config stops the start naming its key", "[http]") {
  jq::test::TempDir dir;
  std::ofstream(dir.file("c.yaml"))
      << "constraints:\n  - {name: a, match: {name: '*'}, rate: {limit: 1, period: 0}}\n";
  auto r = jq::test::run_master({"--config", dir.file("c.yaml")});
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("constraints[0].rate.period") != std::string::npos);
}
