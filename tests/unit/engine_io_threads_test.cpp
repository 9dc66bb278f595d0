// io_threads: 0 leaves a core to a Redis on the same machine.
#include <catch2/catch.hpp>

#include "src/app/io_threads.hpp"

using jq::app::io_thread_count;
using jq::app::redis_is_local;

TEST_CASE("io_threads set is taken as is", "[unit]") {
  CHECK(io_thread_count(3, "", 2) == 3);
  CHECK(io_thread_count(1, "redis://db.example:6379/0", 16) == 1);
}

TEST_CASE("io_threads 0 is one per core, less one when Redis runs on this machine", "[unit]") {
  CHECK(io_thread_count(0, "", 2) == 1);  // the embedded Redis
  CHECK(io_thread_count(0, "", 8) == 7);
  CHECK(io_thread_count(0, "redis://127.0.0.1:6379/0", 4) == 3);
  CHECK(io_thread_count(0, "unix:///run/redis.sock", 4) == 3);
  CHECK(io_thread_count(0, "redis+cluster://127.0.0.1:7000,127.0.0.1:7001", 4) == 3);
  CHECK(io_thread_count(0, "redis://db.example:6379/0", 4) == 4);
  CHECK(io_thread_count(0, "redis+cluster://127.0.0.1:7000,10.0.0.2:7000", 4) == 4);
  CHECK(io_thread_count(0, "", 1) == 1);
  CHECK(io_thread_count(0, "redis://db.example:6379/0", 0) == 1);  // cores unknown
}

TEST_CASE("a Redis on this machine is the embedded one, a loopback host or a unix socket",
          "[unit]") {
  CHECK(redis_is_local(""));
  CHECK(redis_is_local("redis://localhost:6379/0"));
  CHECK(redis_is_local("redis://[::1]:6379/0"));
  CHECK_FALSE(redis_is_local("redis://10.1.2.3:6379/0"));
  CHECK_FALSE(redis_is_local("not a url"));
}
