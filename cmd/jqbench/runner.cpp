#include "cmd/jqbench/runner.hpp"

#include <algorithm>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/strand.hpp>

namespace jq::bench {
namespace {

constexpr std::chrono::milliseconds kPollUnknown{10};  // no expected total
constexpr std::chrono::milliseconds kPollMin{2};
constexpr std::chrono::milliseconds kPollMax{100};
constexpr double kShareOfRemaining = 0.25;  // of the time the jobs left should take

}  // namespace

void SucceededPoller::start(std::shared_ptr<SucceededPoller> self, asio::io_context& io) {
  asio::co_spawn(asio::make_strand(io), loop(std::move(self)), asio::detached);
}

Clock::duration SucceededPoller::next_wait(double jobs_per_s) const {
  const std::int64_t target = target_.load();
  if (target <= 0 || jobs_per_s <= 0) return kPollUnknown;
  const double left_s =
      static_cast<double>(std::max<std::int64_t>(target - done_.load(), 0)) / jobs_per_s;
  const auto wait = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(left_s * kShareOfRemaining));
  return std::clamp<Clock::duration>(wait, kPollMin, kPollMax);
}

asio::awaitable<void> SucceededPoller::loop(std::shared_ptr<SucceededPoller> self) {
  std::int64_t last_done = 0;
  auto last_read = Clock::now();
  while (!self->stopped_) {
    const auto succeeded = co_await succeeded_jobs(*self->master_);
    ++self->polls_;
    const auto now = Clock::now();
    double rate = 0;
    if (succeeded) {
      const std::int64_t done = *succeeded - self->base_;
      if (done != self->done_.load()) {
        self->done_ = done;
        self->last_change_ticks_ = now.time_since_epoch().count();
      }
      const double seconds = std::chrono::duration<double>(now - last_read).count();
      if (seconds > 0) rate = static_cast<double>(done - last_done) / seconds;
      last_done = done;
      last_read = now;
    }
    co_await sleep_for(self->next_wait(rate));
  }
}

asio::awaitable<Expected<Runner, std::string>> start_runner(Bench& bench, HttpConnection& master,
                                                            CountDone count) {
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
    if (count == CountDone::yes) {
      const auto base = co_await succeeded_jobs(master);
      if (!base) co_return unexpected(base.error());
      runner.poller = std::make_shared<SucceededPoller>(bench.connect(), *base);
      SucceededPoller::start(runner.poller, bench.io());
    }
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
  if (runner.poller) out.fields["stats_polls"] = runner.poller->polls();
}

}  // namespace jq::bench
