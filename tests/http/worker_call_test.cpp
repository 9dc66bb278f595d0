// The master's HTTP client for worker endpoints (ConnectionPool), called directly against a
// real jqworker.
#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <optional>
#include <string_view>
#include <thread>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "src/dispatch/tls_contexts.hpp"
#include "src/dispatch/worker_call.hpp"
#include "tests/support/full_listener.hpp"
#include "tests/support/worker.hpp"

namespace jq::test {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using dispatch::ConnectionPool;
using dispatch::WorkerAnswer;
using dispatch::WorkerCall;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

WorkerCall job_call(const std::string& id, Clock::time_point deadline) {
  const auto body = json::to_msgpack({{"id", id}, {"attempt", 1}});
  WorkerCall call;
  call.target = "/";
  call.body.assign(body.begin(), body.end());
  call.deadline = deadline;
  return call;
}

asio::awaitable<void> call_into(ConnectionPool& pool, WorkerCall call,
                                std::optional<WorkerAnswer>& answer) {
  answer = co_await pool.call(std::move(call));
}

WorkerAnswer run_call(asio::io_context& io, ConnectionPool& pool, WorkerCall call) {
  std::optional<WorkerAnswer> answer;
  asio::co_spawn(io, call_into(pool, std::move(call), answer), asio::detached);
  io.restart();
  io.run();
  REQUIRE(answer);
  return *answer;
}

// Reads one whole request (headers, then Content-Length bytes of body) from `fd`.
bool read_request(int fd) {
  std::string in;
  char chunk[4096];
  std::size_t body_at = std::string::npos, length = 0;
  while (body_at == std::string::npos || in.size() < body_at + length) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n <= 0) return false;
    in.append(chunk, static_cast<std::size_t>(n));
    if (body_at == std::string::npos && (body_at = in.find("\r\n\r\n")) != std::string::npos) {
      body_at += 4;
      const auto field = in.find("Content-Length: ");
      if (field != std::string::npos) length = std::stoul(in.substr(field + 16));
    }
  }
  return true;
}

void write_all(int fd, std::string_view bytes) {
  [[maybe_unused]] const auto sent = ::write(fd, bytes.data(), bytes.size());
}

// A success whose result is `result` (a JSON string without escapes).
std::string success_answer(const std::string& result) {
  const std::string body =
      R"({"type":"success","finished_at":"2026-01-01T00:00:00Z","result":")" + result + "\"}";
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

// A worker on a plain socket whose thread runs `serve(listener)`; it stops listening when
// serve returns (new connections are refused), or when the test ends (an accept still waiting
// returns).
class RawWorker {
 public:
  explicit RawWorker(std::function<void(int listener)> serve) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(listener_ >= 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof(at);
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&at), size) == 0);
    REQUIRE(::listen(listener_, 4) == 0);
    REQUIRE(::getsockname(listener_, reinterpret_cast<sockaddr*>(&at), &size) == 0);
    port_ = ntohs(at.sin_port);
    if (serve) {
      thread_ = std::thread([this, serve = std::move(serve)] {
        serve(listener_);
        ::shutdown(listener_, SHUT_RDWR);
      });
    }
  }
  ~RawWorker() {
    ::shutdown(listener_, SHUT_RDWR);
    if (thread_.joinable()) thread_.join();
    ::close(listener_);
  }
  std::uint16_t port() const { return port_; }
  // Waits until serve returned and the listener stopped.
  void wait_gone() { thread_.join(); }

 private:
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

// Closes `fd` the way a crash does when `reset` (SO_LINGER 0: a reset), else with a FIN, as a
// process that exits having read all it was sent.
void go_away(int fd, bool reset) {
  if (reset) {
    const linger now{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &now, sizeof now);
  }
  ::close(fd);
}

// Answers its connection's first request (keeping the connection), then goes away and stops
// listening, so a new connection is refused. `after_second_request`: once the second request
// arrived whole (the job crashed it), else at once, while the connection waits idle in the
// master's pool.
std::function<void(int)> crashing(bool after_second_request, bool reset) {
  return [=](int listener) {
    const int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0) return;
    if (read_request(fd)) {
      write_all(fd, success_answer("first"));
      if (after_second_request) read_request(fd);
    }
    go_away(fd, reset);
  };
}

}  // namespace

TEST_CASE("a close or reset after the job was sent on a kept-alive connection is a failed attempt",
          "[http]") {
  // The job crashed its worker (a process that read the job and exited sends a FIN, one that
  // left it unread a reset): retrying it on a new connection would find the worker down and give
  // the attempt back uncounted, for ever.
  const bool reset = GENERATE(true, false);
  RawWorker worker(crashing(true, reset));
  asio::io_context io;
  ConnectionPool pool(io.get_executor(), {false, "127.0.0.1", worker.port(), "/"}, nullptr, "", 4);
  CHECK(run_call(io, pool, job_call("first", Clock::now() + 10s)).kind ==
        WorkerAnswer::Kind::answered);
  const WorkerAnswer crashed = run_call(io, pool, job_call("crasher", Clock::now() + 10s));
  CHECK(crashed.kind == WorkerAnswer::Kind::broken);
  CHECK_THAT(crashed.error, Catch::Contains("closed the connection after the job was sent"));
}

TEST_CASE("a reset of an idle kept-alive connection before the job is sent is unreachable",
          "[http]") {
  RawWorker worker(crashing(false, true));
  asio::io_context io;
  ConnectionPool pool(io.get_executor(), {false, "127.0.0.1", worker.port(), "/"}, nullptr, "", 4);
  CHECK(run_call(io, pool, job_call("first", Clock::now() + 10s)).kind ==
        WorkerAnswer::Kind::answered);
  worker.wait_gone();
  // The write meets the reset (or, had it gone out, the read would see it before any answer);
  // the retry on a new connection is refused: the job was never delivered.
  const WorkerAnswer answer = run_call(io, pool, job_call("next", Clock::now() + 10s));
  CHECK(answer.kind == WorkerAnswer::Kind::unreachable);
}

TEST_CASE("a worker call whose deadline has already passed is not sent", "[http]") {
  Worker worker;
  asio::io_context io;
  const api::HttpUrl url{false, "127.0.0.1", worker.port(), "/"};
  ConnectionPool pool(io.get_executor(), url, nullptr, "", 4);
  // A call in time leaves its connection in the pool: the first late call would reuse it, the
  // second one (the pool emptied) would open a new one.
  CHECK(run_call(io, pool, job_call("in-time", Clock::now() + 10s)).kind ==
        WorkerAnswer::Kind::answered);
  CHECK(run_call(io, pool, job_call("late-reused", Clock::now() - 1ms)).kind ==
        WorkerAnswer::Kind::timed_out);
  pool.clear();
  CHECK(run_call(io, pool, job_call("late-new", Clock::now() - 1ms)).kind ==
        WorkerAnswer::Kind::timed_out);
  // Sent after the late ones: once the worker has it, it would have had them too.
  CHECK(run_call(io, pool, job_call("after", Clock::now() + 10s)).kind ==
        WorkerAnswer::Kind::answered);
  const json seen = worker.stats()["by_job"];
  CHECK(seen.contains("after"));
  CHECK_FALSE(seen.contains("late-reused"));
  CHECK_FALSE(seen.contains("late-new"));
}

TEST_CASE("an idle kept-alive connection the worker closed is not used for the next job",
          "[http]") {
  // The worker closes each connection after its answer, as a server ending idle connections
  // does, and takes the next job on a new one.
  std::atomic<int> connections{0}, closed{0};
  RawWorker worker([&](int listener) {
    for (int i = 0; i < 2; ++i) {
      const int fd = ::accept(listener, nullptr, nullptr);
      if (fd < 0) return;
      ++connections;
      if (read_request(fd)) write_all(fd, success_answer(i == 0 ? "first" : "second"));
      go_away(fd, false);
      ++closed;
    }
  });
  asio::io_context io;
  ConnectionPool pool(io.get_executor(), {false, "127.0.0.1", worker.port(), "/"}, nullptr, "", 4);
  CHECK(run_call(io, pool, job_call("first", Clock::now() + 10s)).kind ==
        WorkerAnswer::Kind::answered);
  // The close reaches the master while the connection is idle in its pool.
  REQUIRE(wait_until([&] { return closed == 1; }, 5s));
  const WorkerAnswer next = run_call(io, pool, job_call("second", Clock::now() + 10s));
  CHECK(next.kind == WorkerAnswer::Kind::answered);
  CHECK_THAT(next.body, Catch::Contains("second"));
  CHECK(connections == 2);
}

TEST_CASE("interim answers before a worker's answer are skipped, and each job gets its own",
          "[http]") {
  // 100 Continue (a registration may send Expect) and 103 Early Hints come before the answer;
  // read as the answer, the real one would be left for the next job on the connection.
  RawWorker worker([](int listener) {
    const int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0) return;
    for (const char* result : {"first", "second"}) {
      if (!read_request(fd)) break;
      write_all(fd, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n");
      write_all(fd, success_answer(result));
    }
    go_away(fd, false);
  });
  asio::io_context io;
  ConnectionPool pool(io.get_executor(), {false, "127.0.0.1", worker.port(), "/"}, nullptr, "", 4);
  const WorkerAnswer first = run_call(io, pool, job_call("first", Clock::now() + 10s));
  CHECK(first.status == 200);
  CHECK_THAT(first.body, Catch::Contains("first"));
  const WorkerAnswer second = run_call(io, pool, job_call("second", Clock::now() + 10s));
  CHECK(second.status == 200);
  CHECK_THAT(second.body, Catch::Contains("second"));
}

TEST_CASE("a worker's chunked answer is read whole, with its first Content-Type", "[http]") {
  RawWorker worker([](int listener) {
    const int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0) return;
    if (read_request(fd)) {
      write_all(fd,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Type: text/plain\r\n"
                "Transfer-Encoding: chunked\r\n\r\n"
                "f\r\n{\"type\":\"succes\r\n"
                "32\r\ns\",\"finished_at\":\"2026-01-01T00:00:00Z\",\"result\":\"\r\n"
                "8\r\nchunked\"\r\n"
                "1\r\n}\r\n"
                "0\r\n\r\n");
    }
    go_away(fd, false);
  });
  asio::io_context io;
  ConnectionPool pool(io.get_executor(), {false, "127.0.0.1", worker.port(), "/"}, nullptr, "", 4);
  const WorkerAnswer answer = run_call(io, pool, job_call("first", Clock::now() + 10s));
  CHECK(answer.kind == WorkerAnswer::Kind::answered);
  CHECK(answer.status == 200);
  CHECK(answer.content_type == "application/json");
  CHECK(answer.body ==
        R"({"type":"success","finished_at":"2026-01-01T00:00:00Z","result":"chunked"})");
}

TEST_CASE("a worker that sends more than its answer does not get the connection again", "[http]") {
  // After its first answer the worker sends a second one nobody asked for, while the connection
  // waits in the pool: a job sent on it would be answered by that one.
  std::atomic<bool> answered_first{false}, stray_sent{false};
  RawWorker worker([&](int listener) {
    for (const char* result : {"one", "two"}) {
      const int fd = ::accept(listener, nullptr, nullptr);
      if (fd < 0) return;
      if (read_request(fd)) write_all(fd, success_answer(result));
      if (!stray_sent) {
        wait_until([&] { return answered_first.load(); }, 5s);
        write_all(fd, success_answer("stray"));
        stray_sent = true;
        if (read_request(fd)) write_all(fd, success_answer("late"));
      }
      go_away(fd, false);
    }
  });
  asio::io_context io;
  ConnectionPool pool(io.get_executor(), {false, "127.0.0.1", worker.port(), "/"}, nullptr, "", 4);
  CHECK_THAT(run_call(io, pool, job_call("first", Clock::now() + 10s)).body,
             Catch::Contains("one"));
  answered_first = true;
  REQUIRE(wait_until([&] { return stray_sent.load(); }, 5s));
  const WorkerAnswer next = run_call(io, pool, job_call("second", Clock::now() + 10s));
  CHECK_THAT(next.body, Catch::Contains("two"));
}

TEST_CASE("a connection that cannot be made within the connect timeout is unreachable", "[http]") {
  FullListener host;
  asio::io_context io;
  ConnectionPool pool(io.get_executor(), {false, "127.0.0.1", host.port(), "/"}, nullptr, "", 4,
                      {.connect_timeout = 300ms});
  const auto began = Clock::now();
  const WorkerAnswer answer = run_call(io, pool, job_call("job", Clock::now() + 30s));
  CHECK(answer.kind == WorkerAnswer::Kind::unreachable);
  CHECK_THAT(answer.error, Catch::Contains("cannot connect"));
  CHECK(Clock::now() - began < 5s);
}

// A job whose timeout is shorter than the connect timeout: its deadline cuts the connect short.
// It was never sent, so it must not count as an attempt the worker took too long on.
TEST_CASE("a connection that cannot be made before the job's deadline is unreachable, not late",
          "[http]") {
  FullListener host;
  asio::io_context io;
  ConnectionPool pool(io.get_executor(), {false, "127.0.0.1", host.port(), "/"}, nullptr, "", 4,
                      {.connect_timeout = 10s});
  const auto began = Clock::now();
  const WorkerAnswer answer = run_call(io, pool, job_call("job", Clock::now() + 300ms));
  CHECK(answer.kind == WorkerAnswer::Kind::unreachable);
  CHECK_THAT(answer.error, Catch::Contains("cannot connect"));
  CHECK(Clock::now() - began < 5s);
}

TEST_CASE("a TLS handshake that does not end within the connect timeout is unreachable, timed out",
          "[http]") {
  RawWorker silent({});  // the backlog takes the connection; nothing ever answers on it
  asio::io_context io;
  ConnectionPool pool(io.get_executor(), {true, "127.0.0.1", silent.port(), "/"},
                      std::make_shared<dispatch::TlsContexts>(""), "", 4,
                      {.connect_timeout = 300ms});
  const auto began = Clock::now();
  const WorkerAnswer answer = run_call(io, pool, job_call("job", Clock::now() + 30s));
  CHECK(answer.kind == WorkerAnswer::Kind::unreachable);
  CHECK_THAT(answer.error, Catch::Contains("handshake") && Catch::Contains("timed out"));
  CHECK(Clock::now() - began < 5s);
}

}  // namespace jq::test
