// The master's HTTP client for worker endpoints (ConnectionPool), called directly against a
// real jqworker.
#include <catch2/catch.hpp>

#include <optional>
#include <thread>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "src/dispatch/worker_call.hpp"
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

// A worker on a plain socket that answers its connection's first request (keeping the
// connection), then goes away the way a crash does: with a reset (SO_LINGER 0), and no longer
// listening, so a new connection is refused. `after_second_request`: the reset comes once the
// second request has arrived whole (the job crashed it), else at once, while the connection
// waits idle in the master's pool.
class CrashingWorker {
 public:
  explicit CrashingWorker(bool after_second_request) {
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
    thread_ = std::thread([this, after_second_request] { serve(after_second_request); });
  }
  ~CrashingWorker() {
    if (thread_.joinable()) thread_.join();
    if (listener_ >= 0) ::close(listener_);
  }
  std::uint16_t port() const { return port_; }
  // Waits until the connection was reset and the listener closed.
  void wait_gone() { thread_.join(); }

 private:
  // Reads one whole request (headers, then Content-Length bytes of body).
  static bool read_request(int fd) {
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

  void serve(bool after_second_request) {
    const int fd = ::accept(listener_, nullptr, nullptr);
    if (fd < 0) return;
    if (read_request(fd)) {
      static constexpr std::string_view kAnswer =
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 71\r\n\r\n"
          R"({"type":"success","finished_at":"2026-01-01T00:00:00Z","result":null}  )";
      [[maybe_unused]] const auto sent = ::write(fd, kAnswer.data(), kAnswer.size());
      if (after_second_request) read_request(fd);
    }
    ::close(listener_);
    listener_ = -1;
    const linger reset{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    ::close(fd);
  }

  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

}  // namespace

TEST_CASE("a reset after the job was sent on a kept-alive connection is a failed attempt",
          "[http]") {
  // The job crashed its worker: retrying it on a new connection would find the worker down and
  // give the attempt back uncounted, for ever.
  CrashingWorker worker(true);
  asio::io_context io;
  ConnectionPool pool(io.get_executor(), {false, "127.0.0.1", worker.port(), "/"}, nullptr, "", 4);
  CHECK(run_call(io, pool, job_call("first", Clock::now() + 10s)).kind ==
        WorkerAnswer::Kind::answered);
  const WorkerAnswer crashed = run_call(io, pool, job_call("crasher", Clock::now() + 10s));
  CHECK(crashed.kind == WorkerAnswer::Kind::broken);
  CHECK_THAT(crashed.error, Catch::Contains("reset the connection after the job was sent"));
}

TEST_CASE("a reset of an idle kept-alive connection before the job is sent is unreachable",
          "[http]") {
  CrashingWorker worker(false);
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

}  // namespace jq::test
