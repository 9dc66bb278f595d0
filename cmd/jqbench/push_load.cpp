#include "cmd/jqbench/push_load.hpp"

#include <algorithm>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/strand.hpp>

namespace jq::bench {
namespace {

constexpr std::chrono::microseconds kHoldBackPoll{200};
constexpr std::chrono::milliseconds kRunningPoll{2};
constexpr std::string_view kResultWait = "?wait=30";  // seconds, the contract allows up to 60

}  // namespace

PushLoad::PushLoad(Bench& bench, PushPlan plan, JobShape shape)
    : bench_(bench), plan_(std::move(plan)), shape_(std::move(shape)) {}

asio::awaitable<void> PushLoad::run(Progress& progress) {
  running_ = plan_.connections;
  for (int i = 0; i < plan_.connections; ++i) {
    asio::co_spawn(bench_.serial_executor(), pusher(i), [this](std::exception_ptr e) {
      if (e) {
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& ex) {
          fail(std::string("a pusher stopped: ") + ex.what());
        }
      }
      --running_;
    });
  }
  while (running_ > 0) {
    co_await sleep_for(kRunningPoll);
    progress.tick("pushed", acked_.load());
  }
}

// Jobs for the next request; 0 once the plan is complete.
int PushLoad::claim() {
  if (errors_ > 0) return 0;
  if (!plan_.jobs) {
    if (Clock::now() >= plan_.until) return 0;
    claimed_ += plan_.batch;
    return plan_.batch;
  }
  const std::int64_t before = claimed_.fetch_add(plan_.batch);
  if (before >= *plan_.jobs) return 0;
  return static_cast<int>(std::min<std::int64_t>(plan_.batch, *plan_.jobs - before));
}

asio::awaitable<void> PushLoad::hold_back() {
  if (plan_.window <= 0 || !plan_.done) co_return;
  while (claimed_.load() - plan_.done() >= plan_.window && Clock::now() < plan_.until &&
         errors_ == 0) {
    co_await sleep_for(kHoldBackPoll);
  }
}

asio::awaitable<void> PushLoad::pusher(int index) {
  auto master = bench_.connect();
  JobEncoder encoder(shape_, static_cast<std::uint64_t>(index) + 1);
  std::string body;
  std::vector<Clock::duration> samples;
  for (;;) {
    co_await hold_back();
    const int count = claim();
    if (count == 0) break;
    encoder.encode(body, count, plan_.batch > 1);
    const auto sent = Clock::now();
    const auto r = co_await master->request(Method::post, "v1/jobs", body, encoder.json());
    samples.push_back(Clock::now() - sent);
    ++requests_;
    if (r.status != 201) {
      fail("POST /v1/jobs: " + describe(r));
      break;
    }
    acked_ += count;
    if (plan_.fetch_results) {
      const bool fetched = co_await fetch_results(*master, r.body);
      if (!fetched) break;
    }
  }
  std::lock_guard lock(mutex_);
  ack_samples_.insert(ack_samples_.end(), samples.begin(), samples.end());
}

asio::awaitable<bool> PushLoad::fetch_results(HttpConnection& master, std::string_view ids_body) {
  const auto ids = decode_ids(ids_body);
  if (ids.empty()) {
    fail("POST /v1/jobs answered 201 without ids");
    co_return false;
  }
  for (const auto& id : ids) {
    std::string path = "v1/jobs/" + id + "/result";
    path += kResultWait;
    const auto r =
        co_await master.request(Method::get, std::move(path), {}, shape_.format == Format::json);
    if (r.status != 200 || !holds_result(r.body)) {
      fail("GET /v1/jobs/" + id + "/result: HTTP " + std::to_string(r.status) +
           (r.status == 0 ? " " + r.error : std::string(" without a result")));
      co_return false;
    }
    ++fetched_;
    const std::int64_t ticks = Clock::now().time_since_epoch().count();
    std::int64_t last = last_fetch_ticks_.load();
    while (ticks > last && !last_fetch_ticks_.compare_exchange_weak(last, ticks)) {
    }
  }
  co_return true;
}

void PushLoad::fail(std::string message) {
  std::lock_guard lock(mutex_);
  if (errors_++ == 0) first_error_ = std::move(message);
}

std::string PushLoad::first_error() const {
  std::lock_guard lock(mutex_);
  return first_error_;
}

Clock::time_point PushLoad::last_fetch() const {
  return Clock::time_point(Clock::duration(last_fetch_ticks_.load()));
}

std::vector<Clock::duration> PushLoad::take_ack_samples() {
  std::lock_guard lock(mutex_);
  return std::exchange(ack_samples_, {});
}

}  // namespace jq::bench
