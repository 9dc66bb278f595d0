#include "cmd/jqbench/runner.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/strand.hpp>

namespace jq::bench {
namespace {

constexpr std::chrono::milliseconds kStatsPoll{10};

}  // namespace

void SucceededPoller::start(std::shared_ptr<SucceededPoller> self, asio::io_context& io) {
  asio::co_spawn(asio::make_strand(io), loop(std::move(self)), asio::detached);
}

asio::awaitable<void> SucceededPoller::loop(std::shared_ptr<SucceededPoller> self) {
  while (!self->stopped_) {
    const auto succeeded = co_await succeeded_jobs(*self->master_);
    if (succeeded && *succeeded - self->base_ != self->done_.load()) {
      self->done_ = *succeeded - self->base_;
      self->last_change_ticks_ = Clock::now().time_since_epoch().count();
    }
    co_await sleep_for(kStatsPoll);
  }
}

asio::awaitable<Expected<Runner, std::string>> start_runner(Bench& bench, HttpConnection& master) {
  const Options& o = bench.options();
  Runner runner;
  std::string url = o.worker_url;
  if (url.empty()) {
    runner.endpoint = &bench.worker();
    runner.endpoint->start();
    runner.answered_before = runner.endpoint->answered();
    url = runner.endpoint->url();
    runner.kind = o.worker_mode == WorkerMode::decode ? "decode" : "noop";
  } else {
    const auto base = co_await succeeded_jobs(master);
    if (!base) co_return unexpected(base.error());
    runner.poller = std::make_shared<SucceededPoller>(bench.connect(), *base);
    SucceededPoller::start(runner.poller, bench.io());
    runner.kind = "external";
  }
  auto id = co_await register_worker(master, url, o.worker_concurrency);
  if (!id) {
    if (runner.poller) runner.poller->stop();
    co_return unexpected(id.error());
  }
  runner.id = std::move(*id);
  co_return runner;
}

asio::awaitable<void> stop_runner(HttpConnection& master, Runner& runner) {
  if (runner.poller) runner.poller->stop();
  if (!runner.id.empty()) co_await remove_worker(master, std::exchange(runner.id, {}));
}

void add_runner(Outcome& out, const Runner& runner, const Options& o) {
  out.fields["worker"] = runner.kind;
  out.fields["worker_concurrency"] = o.worker_concurrency;
}

}  // namespace jq::bench
