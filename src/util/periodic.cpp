#include "src/util/periodic.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

namespace jq {
namespace {

// After a step threw: not a busy loop, not a long silence.
constexpr std::chrono::milliseconds kAfterError{200};

}  // namespace

Periodic::Periodic(asio::any_io_executor executor, std::string name, Step step, Finish finish)
    : strand_(asio::make_strand(std::move(executor))),
      name_(std::move(name)),
      step_(std::move(step)),
      finish_(std::move(finish)),
      wakeup_(strand_) {}

void Periodic::start() {
  asio::co_spawn(strand_, run(), asio::detached);
}

void Periodic::stop() {
  asio::post(strand_, [this] { stopping_ = true; });
  wakeup_.notify();
}

void Periodic::poke() {
  wakeup_.notify();
}

asio::awaitable<void> Periodic::run() {
  while (!stopping_) {
    Duration sleep = kAfterError;
    try {
      sleep = co_await step_();
    } catch (const std::exception& e) {
      spdlog::error("{}: {}", name_, e.what());
    }
    if (stopping_) break;
    co_await wakeup_.wait(sleep);
  }
  if (finish_) co_await finish_();
  done_.store(true, std::memory_order_release);
}

}  // namespace jq
