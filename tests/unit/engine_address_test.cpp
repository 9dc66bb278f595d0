// Redis URLs: redis://[:password@]host[:port][/db] and unix:///path[?db=N].
#include <catch2/catch.hpp>

#include "src/redis/address.hpp"

using jq::redis::parse_address;

TEST_CASE("a redis URL gives host, port and database", "[unit]") {
  auto a = parse_address("redis://cache.internal:6380/2");
  REQUIRE(a);
  CHECK_FALSE(a->is_unix);
  CHECK(a->host == "cache.internal");
  CHECK(a->port == 6380);
  CHECK(a->db == 2);
  CHECK(a->password.empty());
}

TEST_CASE("a redis URL without port or database uses 6379 and database 0", "[unit]") {
  for (const char* url : {"redis://localhost", "redis://localhost/", "redis://localhost/0"}) {
    INFO(url);
    auto a = parse_address(url);
    REQUIRE(a);
    CHECK(a->host == "localhost");
    CHECK(a->port == 6379);
    CHECK(a->db == 0);
  }
}

TEST_CASE("a redis URL carries a password, which describe() never shows", "[unit]") {
  auto a = parse_address("redis://:s3cret@10.0.0.5:7000/1");
  REQUIRE(a);
  CHECK(a->password == "s3cret");
  CHECK(a->host == "10.0.0.5");
  CHECK(a->port == 7000);
  CHECK(a->db == 1);
  CHECK(a->describe() == "redis://10.0.0.5:7000/1");

  auto with_user = parse_address("redis://default:pa:ss@host");
  REQUIRE(with_user);
  CHECK(with_user->username == "default");
  CHECK(with_user->password == "pa:ss");
  CHECK(with_user->host == "host");

  // Without a colon it is unclear whether a user or a password is meant: said, not dropped.
  auto user_only = parse_address("redis://alice@host");
  REQUIRE_FALSE(user_only);
  CHECK_THAT(user_only.error(), Catch::Contains("user:password@"));
}

TEST_CASE("a redis URL's credentials may hold any byte, percent-encoded or a raw / or @",
          "[unit]") {
  auto encoded = parse_address("redis://jq:a%2Fb%40c%3A%25@127.0.0.1:6379/2");
  REQUIRE(encoded);
  CHECK(encoded->username == "jq");
  CHECK(encoded->password == "a/b@c:%");
  CHECK(encoded->host == "127.0.0.1");
  CHECK(encoded->port == 6379);
  CHECK(encoded->db == 2);
  // A base64 password as generated, unencoded.
  auto raw = parse_address("redis://:Zm9v/YmFy+@db.internal:6380/0");
  REQUIRE(raw);
  CHECK(raw->password == "Zm9v/YmFy+");
  CHECK(raw->host == "db.internal");
  CHECK(raw->port == 6380);
  auto cluster = jq::redis::parse_target("redis+cluster://jq:se/cret@10.0.0.1:7000,10.0.0.2:7001");
  REQUIRE(cluster);
  REQUIRE(cluster->servers.size() == 2);
  CHECK(cluster->servers[1].password == "se/cret");
  CHECK(cluster->servers[1].port == 7001);
  const auto bad = parse_address("redis://jq:50%@host");
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error(), Catch::Contains("two hex digits"));
}

TEST_CASE("a redis URL takes an IPv6 host in brackets", "[unit]") {
  auto a = parse_address("redis://[::1]:6380/3");
  REQUIRE(a);
  CHECK(a->host == "::1");
  CHECK(a->port == 6380);
  CHECK(a->db == 3);

  auto no_port = parse_address("redis://[fe80::1]");
  REQUIRE(no_port);
  CHECK(no_port->host == "fe80::1");
  CHECK(no_port->port == 6379);
}

TEST_CASE("a unix URL gives an absolute socket path and an optional database", "[unit]") {
  auto a = parse_address("unix:///var/run/redis/redis.sock");
  REQUIRE(a);
  CHECK(a->is_unix);
  CHECK(a->host == "/var/run/redis/redis.sock");
  CHECK(a->db == 0);
  CHECK(a->describe() == "unix:///var/run/redis/redis.sock");

  auto with_db = parse_address("unix:///tmp/r.sock?db=3");
  REQUIRE(with_db);
  CHECK(with_db->host == "/tmp/r.sock");
  CHECK(with_db->db == 3);
  CHECK(with_db->describe() == "unix:///tmp/r.sock?db=3");
}

TEST_CASE("a URL of another scheme is refused with the accepted forms", "[unit]") {
  for (const char* url : {"http://localhost:6379", "rediss://localhost", "localhost:6379", ""}) {
    INFO(url);
    auto a = parse_address(url);
    REQUIRE_FALSE(a);
    CHECK_THAT(a.error(), Catch::Contains("unknown scheme"));
    CHECK_THAT(a.error(), Catch::Contains("redis://host:port/db"));
  }
}

TEST_CASE("a redis URL with a bad port is refused", "[unit]") {
  for (const char* url : {"redis://host:0", "redis://host:65536", "redis://host:abc",
                          "redis://host:-1", "redis://host:63 79", "redis://[::1]:x"}) {
    INFO(url);
    auto a = parse_address(url);
    REQUIRE_FALSE(a);
    CHECK_THAT(a.error(), Catch::Contains("port"));
  }
}

TEST_CASE("a redis URL with a bad host or database is refused", "[unit]") {
  CHECK_FALSE(parse_address("redis://"));
  CHECK_FALSE(parse_address("redis://:6379"));
  CHECK_FALSE(parse_address("redis:///0"));
  CHECK_FALSE(parse_address("redis://[::1"));
  CHECK_FALSE(parse_address("redis://[::1]6379"));
  CHECK_FALSE(parse_address("redis://host/abc"));
  CHECK_FALSE(parse_address("redis://host/-1"));
  CHECK_FALSE(parse_address("redis://host/1/2"));
}

TEST_CASE("a unix URL with a relative path or another query is refused", "[unit]") {
  auto relative = parse_address("unix://redis.sock");
  REQUIRE_FALSE(relative);
  CHECK_THAT(relative.error(), Catch::Contains("absolute"));
  CHECK_FALSE(parse_address("unix://"));
  CHECK_FALSE(parse_address("unix:///tmp/r.sock?db=x"));
  CHECK_FALSE(parse_address("unix:///tmp/r.sock?db=-2"));
  CHECK_FALSE(parse_address("unix:///tmp/r.sock?timeout=1"));
}

TEST_CASE("a redis+cluster URL names the seed nodes, which share the credentials", "[unit]") {
  auto t =
      jq::redis::parse_target("redis+cluster://alice:pw@10.0.0.1:7000,10.0.0.2:7001,[::1]:7002");
  REQUIRE(t);
  CHECK(t->cluster);
  REQUIRE(t->servers.size() == 3);
  CHECK(t->servers[0].host == "10.0.0.1");
  CHECK(t->servers[0].port == 7000);
  CHECK(t->servers[1].port == 7001);
  CHECK(t->servers[2].host == "::1");
  for (const auto& s : t->servers) {
    CHECK(s.username == "alice");
    CHECK(s.password == "pw");
    CHECK(s.db == 0);
  }
  CHECK(t->describe() == "redis+cluster://10.0.0.1:7000,10.0.0.2:7001,::1:7002");
}

TEST_CASE("a redis or unix URL is a target of one server", "[unit]") {
  auto t = jq::redis::parse_target("redis://127.0.0.1:6380/2");
  REQUIRE(t);
  CHECK_FALSE(t->cluster);
  REQUIRE(t->servers.size() == 1);
  CHECK(t->servers[0].db == 2);
}

TEST_CASE("a redis+cluster URL without seeds, with an empty seed or a database is refused",
          "[unit]") {
  for (const char* url : {"redis+cluster://", "redis+cluster://a:1,,b:2", "redis+cluster://a:1/3",
                          "redis+cluster://a:99999"}) {
    INFO(url);
    auto t = jq::redis::parse_target(url);
    REQUIRE_FALSE(t);
    CHECK(t.error().find("redis+cluster://host:port") != std::string::npos);
  }
  CHECK(jq::redis::parse_target("redis+cluster://a:1/0"));
}
