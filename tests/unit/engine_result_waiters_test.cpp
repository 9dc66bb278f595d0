// ResultWaiters: which long polls wait for an attempt running on this master, and which of them
// the end of that attempt wakes.
#include <catch2/catch.hpp>

#include <memory>
#include <optional>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "src/events/result_waiters.hpp"

using jq::events::ResultWaiters;
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

// Runs wait() on `ticket` for at most `timeout`; the returned flag is set once the wait ended,
// with whether the ticket was woken.
std::shared_ptr<std::optional<bool>> start_wait(asio::io_context& io, ResultWaiters& waiters,
                                                std::shared_ptr<ResultWaiters::Ticket> ticket,
                                                std::chrono::milliseconds timeout) {
  auto ended = std::make_shared<std::optional<bool>>();
  asio::co_spawn(
      io,
      [&waiters, ticket, timeout, ended]() -> asio::awaitable<void> {
        *ended = co_await waiters.wait(ticket, timeout);
      },
      asio::detached);
  return ended;
}

}  // namespace

TEST_CASE("a poll made while an attempt of its job runs here says so, and only then", "[unit]") {
  asio::io_context io;
  ResultWaiters waiters;
  CHECK_FALSE(waiters.watch("0-a", io.get_executor())->here);
  waiters.running_here("0-a");
  CHECK(waiters.watch("0-a", io.get_executor())->here);
  CHECK_FALSE(waiters.watch("0-b", io.get_executor())->here);
  waiters.ended_here("0-a");
  CHECK_FALSE(waiters.watch("0-a", io.get_executor())->here);
}

TEST_CASE("the end of an attempt here wakes the polls that counted on it, not the others",
          "[unit]") {
  asio::io_context io;
  ResultWaiters waiters;
  auto before = waiters.watch("0-a", io.get_executor());  // counted in the store's watch key
  waiters.running_here("0-a");
  auto during = waiters.watch("0-a", io.get_executor());
  REQUIRE(during->here);
  auto woke_before = start_wait(io, waiters, before, 200ms);
  auto woke_during = start_wait(io, waiters, during, 10s);
  io.poll();
  waiters.ended_here("0-a");
  io.run_for(5s);
  CHECK(*woke_during == std::optional<bool>(true));
  CHECK(*woke_before == std::optional<bool>(false));  // waited out its time
}

TEST_CASE("polls waiting on a job run here stay asleep while another attempt of it runs here",
          "[unit]") {
  asio::io_context io;
  ResultWaiters waiters;
  waiters.running_here("0-a");
  waiters.running_here("0-a");  // the first attempt timed out here and was run again
  auto poll = waiters.watch("0-a", io.get_executor());
  auto woke = start_wait(io, waiters, poll, 200ms);
  io.poll();
  waiters.ended_here("0-a");
  io.run_for(5s);
  CHECK(*woke == std::optional<bool>(false));
  CHECK(waiters.watch("0-a", io.get_executor())->here);
  waiters.ended_here("0-a");
  CHECK_FALSE(waiters.watch("0-a", io.get_executor())->here);
}
