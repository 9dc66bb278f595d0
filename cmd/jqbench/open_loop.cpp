#include "cmd/jqbench/open_loop.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <unordered_map>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace jq::bench {
namespace {

constexpr std::chrono::milliseconds kScheduleStart{10};

struct Push {
  Clock::time_point scheduled, sent, acked;
  std::string id;
};

struct Sender {
  std::unique_ptr<HttpConnection> master;
  JobEncoder encoder;
  std::string body;
};

// Connections for the scheduled sends, each with its own encoder; opened on demand.
class SenderPool {
 public:
  SenderPool(Bench& bench, JobShape shape) : bench_(bench), shape_(std::move(shape)) {}

  std::unique_ptr<Sender> take() {
    std::lock_guard lock(mutex_);
    if (idle_.empty()) {
      ++opened_;
      return std::make_unique<Sender>(
          Sender{bench_.connect(), JobEncoder(shape_, static_cast<std::uint64_t>(opened_)), {}});
    }
    auto sender = std::move(idle_.back());
    idle_.pop_back();
    return sender;
  }

  void give(std::unique_ptr<Sender> sender) {
    std::lock_guard lock(mutex_);
    idle_.push_back(std::move(sender));
  }

  int opened() const {
    std::lock_guard lock(mutex_);
    return opened_;
  }

 private:
  Bench& bench_;
  JobShape shape_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Sender>> idle_;
  int opened_ = 0;
};

class Pushes {
 public:
  void add(Push p) {
    std::lock_guard lock(mutex_);
    pushes_.push_back(std::move(p));
  }
  void fail(std::string message) {
    std::lock_guard lock(mutex_);
    if (errors_++ == 0) first_error_ = std::move(message);
  }
  std::int64_t errors() const {
    std::lock_guard lock(mutex_);
    return errors_;
  }
  std::string first_error() const {
    std::lock_guard lock(mutex_);
    return first_error_;
  }
  std::vector<Push> take() {
    std::lock_guard lock(mutex_);
    return std::exchange(pushes_, {});
  }

 private:
  mutable std::mutex mutex_;
  std::vector<Push> pushes_;
  std::int64_t errors_ = 0;
  std::string first_error_;
};

asio::awaitable<void> send_one(SenderPool& pool, Pushes& pushes, Clock::time_point scheduled,
                               bool measured) {
  auto sender = pool.take();
  sender->encoder.encode(sender->body, 1, false);
  const auto sent = Clock::now();
  const auto r = co_await sender->master->request(Method::post, "v1/jobs", sender->body);
  const auto acked = Clock::now();
  pool.give(std::move(sender));
  if (r.status != 201) {
    pushes.fail("POST /v1/jobs: " +
                (r.status == 0 ? "no answer: " + r.error : "HTTP " + std::to_string(r.status)));
    co_return;
  }
  auto ids = decode_ids(r.body);
  if (ids.size() != 1) {
    pushes.fail("POST /v1/jobs answered 201 without an id");
    co_return;
  }
  if (measured) pushes.add(Push{scheduled, sent, acked, std::move(ids.front())});
}

struct Samples {
  std::vector<Clock::duration> ack, to_worker, done, lag;
  Clock::time_point first_sent = Clock::time_point::max(), last_sent = Clock::time_point::min();
};

// Pairs each measured push with the worker's visit for the same job id.
Samples join(const std::vector<Push>& pushes, const std::vector<JobVisit>& visits) {
  std::unordered_map<std::string_view, const JobVisit*> by_id;
  for (const auto& v : visits) by_id.emplace(v.id, &v);
  Samples s;
  for (const auto& p : pushes) {
    s.ack.push_back(p.acked - p.sent);
    s.lag.push_back(p.sent - p.scheduled);
    s.first_sent = std::min(s.first_sent, p.sent);
    s.last_sent = std::max(s.last_sent, p.sent);
    const auto it = by_id.find(p.id);
    if (it == by_id.end()) continue;
    s.to_worker.push_back(it->second->received - p.sent);
    s.done.push_back(it->second->answered - p.sent);
  }
  return s;
}

}  // namespace

asio::awaitable<Expected<OpenLoopFigures, std::string>> run_open_loop(Bench& bench,
                                                                      WorkerEndpoint& worker,
                                                                      const OpenLoopPlan& plan,
                                                                      CpuMeter& meter) {
  const Options& o = bench.options();
  worker.record_visits(true);
  worker.take_visits();
  const std::int64_t answered_before = worker.answered();
  const std::chrono::duration<double> period(1.0 / plan.rate);
  const std::int64_t total = plan.warmup_jobs + plan.measured_jobs;
  SenderPool pool(bench, plan.shape);
  Pushes pushes;
  std::atomic<std::int64_t> outstanding{0};
  Progress progress(o.progress);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const auto t0 = Clock::now() + kScheduleStart;
  for (std::int64_t i = 0; i < total && pushes.errors() == 0; ++i) {
    const auto due = t0 + std::chrono::duration_cast<Clock::duration>(period * i);
    if (due > Clock::now()) {
      timer.expires_at(due);
      co_await timer.async_wait(asio::use_awaitable);
    }
    if (i == plan.warmup_jobs) meter.start();
    ++outstanding;
    asio::co_spawn(asio::make_strand(bench.io()),
                   send_one(pool, pushes, due, i >= plan.warmup_jobs),
                   [&outstanding, &pushes](std::exception_ptr e) {
                     if (e) pushes.fail("a push failed with an exception");
                     --outstanding;
                   });
    progress.tick("sent", i + 1);
  }
  auto acked_all =
      co_await wait_for([&] { return outstanding.load() == 0; }, [&] { return outstanding.load(); },
                        o.completion_timeout, progress, "awaiting ack");
  auto finished = co_await wait_for(
      [&] { return pushes.errors() > 0 || worker.answered() - answered_before >= total; },
      [&] { return worker.answered() - answered_before; }, o.completion_timeout, progress, "done");
  meter.stop();
  worker.record_visits(false);
  if (pushes.errors() > 0) co_return unexpected(pushes.first_error());
  if (!acked_all) co_return unexpected(acked_all.error());
  if (!finished) co_return unexpected(finished.error());

  const auto measured = pushes.take();
  Samples s = join(measured, worker.take_visits());
  OpenLoopFigures f;
  f.jobs = static_cast<std::int64_t>(measured.size());
  const double span = std::chrono::duration<double>(s.last_sent - s.first_sent).count();
  f.rate_sent_per_s = span > 0 ? static_cast<double>(f.jobs - 1) / span : 0;
  f.connections_opened = pool.opened();
  f.ack = percentiles(std::move(s.ack));
  f.to_worker = percentiles(std::move(s.to_worker));
  f.done = percentiles(std::move(s.done));
  f.send_lag = percentiles(std::move(s.lag));
  co_return f;
}

void add_open_loop(Outcome& out, const OpenLoopFigures& f, const std::string& prefix) {
  out.fields[prefix + "jobs"] = f.jobs;
  out.fields[prefix + "rate_sent_per_s"] = figure(f.rate_sent_per_s);
  out.fields[prefix + "connections_opened"] = f.connections_opened;
  add_percentiles(out, prefix + "ack", f.ack);
  add_percentiles(out, prefix + "to_worker", f.to_worker);
  add_percentiles(out, prefix + "done", f.done);
  out.fields[prefix + "send_lag_p99_ms"] = figure(f.send_lag.p99_ms);
  out.fields[prefix + "send_lag_max_ms"] = figure(f.send_lag.max_ms);
}

}  // namespace jq::bench
