#include "cmd/jqbench/open_loop.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <mutex>
#include <optional>
#include <unordered_map>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace jq::bench {
namespace {

constexpr std::chrono::milliseconds kScheduleStart{10};
constexpr std::string_view kResultWait = "/result?wait=30";  // seconds; the contract allows 60

struct Push {
  Clock::time_point scheduled, sent, acked, fetched;
  std::string id;
};

struct Sender {
  std::unique_ptr<HttpConnection> master;
  JobEncoder encoder;
  std::string body;
};

// Idle things of one kind (connections for the scheduled sends, each with its own encoder, or
// connections for result fetches), made on demand by `make` when none is idle.
template <typename T>
class Pool {
 public:
  explicit Pool(std::function<std::unique_ptr<T>(int opened)> make) : make_(std::move(make)) {}

  std::unique_ptr<T> take() {
    std::lock_guard lock(mutex_);
    if (idle_.empty()) return make_(++opened_);
    auto item = std::move(idle_.back());
    idle_.pop_back();
    return item;
  }

  void give(std::unique_ptr<T> item) {
    std::lock_guard lock(mutex_);
    idle_.push_back(std::move(item));
  }

  int opened() const {
    std::lock_guard lock(mutex_);
    return opened_;
  }

 private:
  std::function<std::unique_ptr<T>(int)> make_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<T>> idle_;
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

struct Pools {
  Pool<Sender> senders;
  Pool<HttpConnection> results;
};

// GET the result of job `id`, waiting for it; the moment its body was read, or nothing (failed).
asio::awaitable<std::optional<Clock::time_point>> fetch_result(Pool<HttpConnection>& pool,
                                                               Pushes& pushes, std::string id,
                                                               bool json) {
  auto connection = pool.take();
  std::string path = "v1/jobs/" + id;
  path += kResultWait;
  const auto r = co_await connection->request(Method::get, std::move(path), {}, json);
  const auto fetched = Clock::now();
  pool.give(std::move(connection));
  if (r.status != 200 || !holds_result(r.body)) {
    pushes.fail("GET /v1/jobs/" + id +
                "/result: " + (r.status == 200 ? std::string("no result") : describe(r)));
    co_return std::nullopt;
  }
  co_return fetched;
}

asio::awaitable<void> send_one(Pools& pools, Pushes& pushes, Clock::time_point scheduled,
                               bool measured, bool fetch) {
  auto sender = pools.senders.take();
  sender->encoder.encode(sender->body, 1, false);
  const bool json = sender->encoder.json();
  const auto sent = Clock::now();
  const auto r = co_await sender->master->request(Method::post, "v1/jobs", sender->body, json);
  const auto acked = Clock::now();
  pools.senders.give(std::move(sender));
  if (r.status != 201) {
    pushes.fail("POST /v1/jobs: " + describe(r));
    co_return;
  }
  auto ids = decode_ids(r.body);
  if (ids.size() != 1) {
    pushes.fail("POST /v1/jobs answered 201 without an id");
    co_return;
  }
  Push push{scheduled, sent, acked, {}, std::move(ids.front())};
  if (fetch) {
    const auto fetched = co_await fetch_result(pools.results, pushes, push.id, json);
    if (!fetched) co_return;
    push.fetched = *fetched;
  }
  if (measured) pushes.add(std::move(push));
}

struct Samples {
  std::vector<Clock::duration> ack, to_worker, done, result, lag;
  Clock::time_point first_sent = Clock::time_point::max(), last_sent = Clock::time_point::min();
};

// Pairs each measured push with the worker's visit for the same job id.
Samples join(const std::vector<Push>& pushes, const std::vector<JobVisit>& visits, bool fetched) {
  std::unordered_map<std::string_view, const JobVisit*> by_id;
  for (const auto& v : visits) by_id.emplace(v.id, &v);
  Samples s;
  for (const auto& p : pushes) {
    s.ack.push_back(p.acked - p.sent);
    s.lag.push_back(p.sent - p.scheduled);
    if (fetched) s.result.push_back(p.fetched - p.sent);
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
                                                                      WorkerEndpoint* worker,
                                                                      const OpenLoopPlan& plan,
                                                                      CpuMeter& meter) {
  const Options& o = bench.options();
  if (worker == nullptr && !plan.fetch_results) {
    co_return unexpected(
        std::string("an open loop without the built-in worker must fetch results"));
  }
  if (worker) {
    worker->record_visits(true);
    worker->take_visits();
  }
  const std::int64_t answered_before = worker ? worker->answered() : 0;
  const std::chrono::duration<double> period(1.0 / plan.rate);
  const std::int64_t total = plan.warmup_jobs + plan.measured_jobs;
  Pools pools{
      Pool<Sender>([&bench, &plan](int opened) {
        return std::make_unique<Sender>(Sender{
            bench.connect(), JobEncoder(plan.shape, static_cast<std::uint64_t>(opened)), {}});
      }),
      Pool<HttpConnection>([&bench](int) { return bench.connect(); })};
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
    asio::co_spawn(bench.serial_executor(),
                   send_one(pools, pushes, due, i >= plan.warmup_jobs, plan.fetch_results),
                   [&outstanding, &pushes](std::exception_ptr e) {
                     if (e) pushes.fail("a push failed with an exception");
                     --outstanding;
                   });
    progress.tick("sent", i + 1);
  }
  auto acked_all = co_await wait_for(
      [&] { return outstanding.load() == 0; }, [&] { return outstanding.load(); },
      o.completion_timeout, progress, plan.fetch_results ? "awaiting results" : "awaiting ack");
  auto finished = co_await wait_for(
      [&] {
        return pushes.errors() > 0 || !worker || worker->answered() - answered_before >= total;
      },
      [&] { return worker ? worker->answered() - answered_before : total; }, o.completion_timeout,
      progress, "done");
  meter.stop();
  if (worker) worker->record_visits(false);
  if (pushes.errors() > 0) co_return unexpected(pushes.first_error());
  if (!acked_all) co_return unexpected(acked_all.error());
  if (!finished) co_return unexpected(finished.error());

  const auto measured = pushes.take();
  Samples s =
      join(measured, worker ? worker->take_visits() : std::vector<JobVisit>{}, plan.fetch_results);
  OpenLoopFigures f;
  f.jobs = static_cast<std::int64_t>(measured.size());
  const double span = std::chrono::duration<double>(s.last_sent - s.first_sent).count();
  f.rate_sent_per_s = span > 0 ? static_cast<double>(f.jobs - 1) / span : 0;
  f.connections_opened = pools.senders.opened();
  f.result_connections_opened = pools.results.opened();
  f.fetched_results = plan.fetch_results;
  f.worker_timed = worker != nullptr;
  f.ack = percentiles(std::move(s.ack));
  f.to_worker = percentiles(std::move(s.to_worker));
  f.done = percentiles(std::move(s.done));
  f.result = percentiles(std::move(s.result));
  f.send_lag = percentiles(std::move(s.lag));
  co_return f;
}

void add_open_loop(Outcome& out, const OpenLoopFigures& f, const std::string& prefix) {
  out.fields[prefix + "jobs"] = f.jobs;
  out.fields[prefix + "rate_sent_per_s"] = figure(f.rate_sent_per_s);
  out.fields[prefix + "connections_opened"] = f.connections_opened;
  add_percentiles(out, prefix + "ack", f.ack);
  if (f.worker_timed) {
    add_percentiles(out, prefix + "to_worker", f.to_worker);
    add_percentiles(out, prefix + "done", f.done);
  }
  if (f.fetched_results) {
    out.fields[prefix + "result_connections_opened"] = f.result_connections_opened;
    add_percentiles(out, prefix + "result", f.result);
  }
  out.fields[prefix + "send_lag_p99_ms"] = figure(f.send_lag.p99_ms);
  out.fields[prefix + "send_lag_max_ms"] = figure(f.send_lag.max_ms);
}

}  // namespace jq::bench
