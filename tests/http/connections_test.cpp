// The HTTP server's protection of itself: keep-alive, timeouts, connection limit, bad HTTP.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tests/support/daemon.hpp"
#include "tests/support/redis_server.hpp"

using namespace std::chrono_literals;
using jq::test::Daemon;
using jq::test::RawConnection;
using jq::test::RedisServer;
using nlohmann::json;

namespace {

const std::string kHealth = "GET /healthz HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n";

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("one connection serves several requests (keep-alive, pipelined)", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, "limits:\n  idle_timeout: 0.5\n"});
  RawConnection c(daemon.port());
  REQUIRE(c.send(kHealth + kHealth + kHealth));
  bool closed = false;
  const std::string answer = c.read_until_closed(5s, &closed);
  CHECK(count(answer, "HTTP/1.1 200 OK") == 3);
  CHECK(closed);  // by the idle timeout after the third answer
}

TEST_CASE("pipelined requests with bodies are each answered: a body ends where its length says",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  const auto post = [](const std::string& body, const std::string& extra) {
    return "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
           "Accept: application/json\r\n" +
           extra + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  };
  RawConnection c(daemon.port());
  // Three requests in one write: the second body is read from the same buffer as the first.
  REQUIRE(c.send(post(R"({"name":"one","argument":1})", "") +
                 post(R"({"name":"two","argument":[2,2]})", "") +
                 post(R"({"name":"three","argument":"3"})", "Connection: close\r\n")));
  const std::string answer = c.read_until_closed(5s);
  CHECK(count(answer, "HTTP/1.1 201 Created\r\n") == 3);
  CHECK(count(answer, "HTTP/1.1 400") == 0);
}

TEST_CASE("a chunked request body is read whole, and only the first of a repeated field counts",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  RawConnection c(daemon.port());
  // The body in three chunks; two Content-Types (the first says JSON) and two Accepts (the first
  // asks for JSON back).
  REQUIRE(c.send(
      "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Type: application/msgpack\r\nAccept: application/json\r\n"
      "Accept: application/msgpack\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
      "a\r\n{\"name\":\"c\r\n"
      "4\r\nhunk\r\n"
      "13\r\ned\",\"argument\":[1]}\r\n"
      "0\r\n\r\n"));
  const std::string answer = c.read_until_closed(5s);
  CHECK(count(answer, "HTTP/1.1 201 Created\r\n") == 1);
  CHECK_THAT(answer, Catch::Contains("Content-Type: application/json"));
  const auto id = json::parse(answer.substr(answer.find("\r\n\r\n") + 4)).at("id");
  auto job = daemon.http().get("/v1/jobs/" + id.get<std::string>()).value();
  CHECK(job["name"] == "chunked");
}

TEST_CASE("a body that arrives after its header, or after 100 Continue, is read whole", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  const std::string body = R"({"name":"later","argument":1})";
  const std::string header =
      "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Accept: application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n";
  SECTION("in a second write") {
    RawConnection c(daemon.port());
    REQUIRE(c.send(header + "Connection: close\r\n\r\n" + body.substr(0, 9)));
    // Nothing to wait for from outside: the pause lets the master read and parse the first
    // part alone, so the rest must come through an asynchronous read.
    std::this_thread::sleep_for(50ms);
    REQUIRE(c.send(body.substr(9)));
    const std::string answer = c.read_until_closed(5s);
    CHECK(answer.rfind("HTTP/1.1 201 Created\r\n", 0) == 0);
  }
  SECTION("after 100 Continue") {
    RawConnection c(daemon.port());
    REQUIRE(c.send(header + "Expect: 100-continue\r\nConnection: close\r\n\r\n"));
    std::this_thread::sleep_for(50ms);  // the master answers 100 before the body is sent
    REQUIRE(c.send(body));
    const std::string answer = c.read_until_closed(5s);
    CHECK(answer.rfind("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\n", 0) == 0);
  }
  CHECK(daemon.http().get("/v1/queues").status == 200);
}

TEST_CASE("an idle or slow client cannot hold a connection", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, "limits:\n  idle_timeout: 0.5\n  read_timeout: 0.5\n"});
  SECTION("idle: connects and sends nothing") {
    RawConnection c(daemon.port());
    bool closed = false;
    c.read_until_closed(5s, &closed);
    CHECK(closed);
  }
  SECTION("slow: starts a request and never finishes its body") {
    RawConnection c(daemon.port());
    REQUIRE(
        c.send("POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               "Content-Length: 100\r\n\r\n{\"na"));
    bool closed = false;
    c.read_until_closed(5s, &closed);
    CHECK(closed);
  }
  CHECK(daemon.http().get("/healthz").status == 200);
}

// The read and idle timeouts bound the client's sending, not the master's answering: a long poll
// holds its connection for as long as it asked.
TEST_CASE("a long poll longer than limits.read_timeout gets its answer on its connection",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, "limits:\n  idle_timeout: 0.3\n  read_timeout: 0.3\n"});
  auto pushed = daemon.http().post("/v1/jobs", {{"name", "email"}, {"keep_result", true}});
  REQUIRE(pushed.status == 201);
  const std::string id = pushed.value()["id"];
  RawConnection c(daemon.port());
  const auto started = std::chrono::steady_clock::now();
  REQUIRE(c.send("GET /v1/jobs/" + id +
                 "/result?wait=1.2 HTTP/1.1\r\nHost: x\r\n"
                 "Accept: application/json\r\n\r\n"));
  bool closed = false;
  const std::string answer = c.read_until_closed(5s, &closed);
  CHECK(count(answer, "HTTP/1.1 202 Accepted") == 1);  // no worker: still queued
  CHECK(std::chrono::steady_clock::now() - started >= 1100ms);
  CHECK(closed);  // then the idle timeout
}

TEST_CASE("a request whose header stops half way is closed after limits.header_timeout", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, "limits:\n  header_timeout: 1\n"});  // idle and read: 60, 30
  RawConnection c(daemon.port());
  const auto started = std::chrono::steady_clock::now();
  REQUIRE(c.send("GET /healthz HTTP/1.1\r\nHost: x\r\n"));
  bool closed = false;
  c.read_until_closed(10s, &closed);
  const auto took = std::chrono::steady_clock::now() - started;
  CHECK(closed);
  CHECK(took >= 900ms);
  CHECK(took < 5s);
}

TEST_CASE("a connection waiting for its next request is not closed by limits.header_timeout",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, "limits:\n  header_timeout: 0.3\n"});
  RawConnection kept_alive(daemon.port());
  RawConnection fresh(daemon.port());
  REQUIRE(kept_alive.send(kHealth));
  bool closed = false;
  // Well past the header timeout, and both still open: the idle timeout (60 s) applies.
  CHECK(count(kept_alive.read_until_closed(1s, &closed), "HTTP/1.1 200 OK") == 1);
  CHECK_FALSE(closed);
  REQUIRE(kept_alive.send(kHealth));
  REQUIRE(fresh.send(kHealth));
  CHECK(count(kept_alive.read_until_closed(1s, &closed), "HTTP/1.1 200 OK") == 1);
  CHECK_FALSE(closed);
  CHECK(count(fresh.read_until_closed(1s, &closed), "HTTP/1.1 200 OK") == 1);
  CHECK_FALSE(closed);
}

TEST_CASE("bytes that are not HTTP get 400 and the connection closes", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  RawConnection c(daemon.port());
  REQUIRE(c.send(std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 garbage\r\n\r\n", 25)));
  bool closed = false;
  const std::string answer = c.read_until_closed(5s, &closed);
  CHECK(answer.starts_with("HTTP/1.1 400"));
  CHECK(closed);
  CHECK(daemon.http().get("/healthz").status == 200);
}

TEST_CASE("connections over limits.max_connections get 503", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, "limits:\n  max_connections: 2\n"});
  {
    RawConnection a(daemon.port());
    RawConnection b(daemon.port());
    REQUIRE(a.send(kHealth));  // make sure both are accepted before the third
    REQUIRE(b.send(kHealth));
    RawConnection c(daemon.port());
    const std::string refused = c.read_until_closed(5s);
    CHECK(refused.starts_with("HTTP/1.1 503"));
    CHECK(refused.find("unavailable") != std::string::npos);
  }
  // Refusals before routing are counted, so an operator sees clients hitting the limits.
  // Any count: a scrape that came before the three closed was refused and counted too.
  const std::string counted =
      R"(jq_http_requests_total{route="refused",method="unknown",status="503"} )";
  CHECK(jq::test::wait_until(
      [&] { return daemon.http().get("/metrics").body.find(counted) != std::string::npos; }, 5s));
}

TEST_CASE("a body over limits.max_body_bytes is counted and logged though no route saw it",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, "limits:\n  max_body_bytes: 2048\nlog:\n  access: true\n"});
  const auto res =
      daemon.http().post("/v1/jobs", {{"name", "big"}, {"argument", std::string(3000, 'x')}});
  CHECK(res.status == 413);
  CHECK(daemon.http()
            .get("/metrics")
            .body.find(R"(jq_http_requests_total{route="refused",method="POST",status="413"} 1)") !=
        std::string::npos);
  CHECK(daemon.logged("http request method=POST path=/v1/jobs status=413", 5s));
}

namespace {

// The CPU time (user and system) process `pid` has used so far, from /proc/<pid>/stat.
double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string skip;
  for (int i = 0; i < 11; ++i) fields >> skip;  // state .. cmajflt: fields 3-13
  long utime = 0, stime = 0;
  fields >> utime >> stime;
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

}  // namespace

TEST_CASE("out of file descriptors the master pauses accepting, says why once, and recovers",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url()});
  // Started, it raised its soft limit to the hard one; now both are small.
  const rlimit small{64, 64};
  REQUIRE(::prlimit(daemon.pid(), RLIMIT_NOFILE, &small, nullptr) == 0);
  std::vector<std::unique_ptr<RawConnection>> clients;
  for (int i = 0; i < 80; ++i) clients.push_back(std::make_unique<RawConnection>(daemon.port()));
  REQUIRE(daemon.logged("accept failed", 5s));
  // Accepting again at once would fail again at once: the io thread would spin.
  const double before = cpu_seconds(daemon.pid());
  std::this_thread::sleep_for(1s);  // a window to measure, not a condition to wait for
  CHECK(cpu_seconds(daemon.pid()) - before < 0.3);
  const std::string log = daemon.log();
  CHECK(count(log, "accept failed") == 1);
  CHECK(log.find("ulimit -n") != std::string::npos);
  // Descriptors free again: the connections waiting in the backlog are served.
  clients.clear();
  CHECK(jq::test::wait_until([&] { return daemon.http().get("/healthz").status == 200; }, 5s));
}
