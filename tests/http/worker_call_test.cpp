// The master's HTTP client for worker endpoints (ConnectionPool), called directly against a
// real jqworker.
#include <catch2/catch.hpp>

#include <optional>

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

}  // namespace

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
