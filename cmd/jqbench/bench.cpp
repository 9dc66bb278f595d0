#include "cmd/jqbench/bench.hpp"

#include <cmath>
#include <iostream>
#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <nlohmann/json.hpp>

#include "common/serial_executor.hpp"

namespace jq::bench {
namespace {

constexpr std::chrono::milliseconds kWaitPoll{2};
constexpr std::chrono::seconds kProgressEvery{1};

std::string host_header(const api::HttpUrl& url) {
  const bool v6 = url.host.find(':') != std::string::npos;
  return (v6 ? "[" + url.host + "]" : url.host) + ":" + std::to_string(url.port);
}

std::string base_path(const api::HttpUrl& url) {
  std::string base = url.target.substr(0, url.target.find('?'));
  if (base.empty() || base.back() != '/') base.push_back('/');
  return base;
}

// GET `path` as JSON, expecting a 200 and an object.
asio::awaitable<Expected<nlohmann::json, std::string>> get_object(HttpConnection& master,
                                                                  std::string path) {
  const auto r = co_await master.request(Method::get, path, {}, true);
  if (r.status != 200) co_return unexpected("GET /" + path + ": " + describe(r));
  auto body = nlohmann::json::parse(r.body, nullptr, false);
  if (!body.is_object()) co_return unexpected("GET /" + path + " answered no object: " + r.body);
  co_return body;
}

std::int64_t integer_or_zero(const nlohmann::json& object, const char* key) {
  return object.contains(key) && object[key].is_number_integer() ? object[key].get<std::int64_t>()
                                                                 : 0;
}

}  // namespace

std::string describe(const HttpResponse& r) {
  if (r.status == 0) return "no answer: " + r.error;
  return "HTTP " + std::to_string(r.status) + " " + r.body.substr(0, 200);
}

Bench::Bench(Options options)
    : options_(std::move(options)),
      io_(options_.threads),
      master_(resolve_master(options_.master.host, options_.master.port)),
      host_header_(host_header(options_.master)) {}

asio::any_io_executor Bench::serial_executor() {
  return jq::serial_executor(io_.get_executor(), options_.threads <= 1);
}

std::unique_ptr<HttpConnection> Bench::connect() {
  return std::make_unique<HttpConnection>(serial_executor(), master_, host_header_,
                                          base_path(options_.master));
}

WorkerEndpoint& Bench::worker() {
  if (!worker_) {
    worker_ = std::make_unique<WorkerEndpoint>(io_, options_.worker_host, options_.worker_port,
                                               options_.worker_mode);
  }
  return *worker_;
}

int Bench::run(std::function<asio::awaitable<int>()> main) {
  std::optional<int> exit_code;
  // Worker connections and pooled master connections never finish by themselves: the run ends
  // when `main` does.
  asio::co_spawn(asio::make_strand(io_), main(), [&](std::exception_ptr e, int code) {
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        std::cerr << "jqbench: " << ex.what() << "\n";
      }
      code = 1;
    }
    exit_code = code;
    io_.stop();
  });
  std::vector<std::thread> threads;
  for (int i = 1; i < options_.threads; ++i) threads.emplace_back([this] { io_.run(); });
  io_.run();
  for (auto& t : threads) t.join();
  return exit_code.value_or(1);
}

asio::awaitable<void> sleep_for(Clock::duration d) {
  asio::steady_timer timer(co_await asio::this_coro::executor, d);
  co_await timer.async_wait(asio::use_awaitable);
}

void Progress::tick(std::string_view what, std::int64_t count) {
  const auto now = Clock::now();
  if (what != what_) {  // another count: its rate starts now
    what_ = std::string(what);
    last_ = now;
    last_count_ = count;
  }
  if (!enabled_ || now < next_) return;
  if (now - start_ >= kProgressEvery && now > last_) {
    const double seconds = std::chrono::duration<double>(now - start_).count();
    const double per_s = static_cast<double>(count - last_count_) /
                         std::chrono::duration<double>(now - last_).count();
    std::cerr << "  " << std::lround(seconds) << " s: " << what << " " << count << " ("
              << std::llround(per_s) << "/s)" << std::endl;
  }
  next_ = now + kProgressEvery;
  last_ = now;
  last_count_ = count;
}

asio::awaitable<Expected<void, std::string>> wait_for(std::function<bool()> done,
                                                      std::function<std::int64_t()> count,
                                                      std::chrono::seconds stall,
                                                      Progress& progress, std::string what) {
  std::int64_t last = count();
  auto last_change = Clock::now();
  while (!done()) {
    co_await sleep_for(kWaitPoll);
    const std::int64_t now = count();
    progress.tick(what, now);
    if (now != last) {
      last = now;
      last_change = Clock::now();
    } else if (Clock::now() - last_change > stall) {
      co_return unexpected("no progress for " + std::to_string(stall.count()) + " s (" + what +
                           " stuck at " + std::to_string(now) + ")");
    }
  }
  co_return Expected<void, std::string>{};
}

asio::awaitable<Expected<void, std::string>> expect_no_jobs(HttpConnection& master) {
  const auto stats = co_await get_object(master, "v1/stats");
  if (!stats) co_return unexpected(stats.error());
  std::int64_t waiting = 0;
  for (const char* key : {"ready", "scheduled", "running"}) waiting += integer_or_zero(*stats, key);
  if (waiting > 0) {
    co_return unexpected("the master already holds " + std::to_string(waiting) +
                         " ready, scheduled or running jobs, which this scenario's worker would "
                         "run and count; start from an empty Redis (FLUSHALL on a benchmark "
                         "instance, then restart the master)");
  }
  co_return Expected<void, std::string>{};
}

asio::awaitable<Expected<std::int64_t, std::string>> succeeded_jobs(HttpConnection& master) {
  const auto stats = co_await get_object(master, "v1/stats");
  if (!stats) co_return unexpected(stats.error());
  co_return integer_or_zero(*stats, "succeeded");
}

asio::awaitable<Expected<void, std::string>> create_constraint(HttpConnection& master,
                                                               std::string definition) {
  const auto r =
      co_await master.request(Method::post, "v1/constraints", std::move(definition), true);
  if (r.status != 201) co_return unexpected("POST /v1/constraints: " + describe(r));
  co_return Expected<void, std::string>{};
}

asio::awaitable<Expected<void, std::string>> delete_constraint(HttpConnection& master,
                                                               std::string name) {
  const auto r = co_await master.request(Method::del, "v1/constraints/" + name, {}, true);
  if (r.status != 204 && r.status != 404) {
    co_return unexpected("DELETE /v1/constraints/" + name + ": " + describe(r));
  }
  co_return Expected<void, std::string>{};
}

asio::awaitable<Expected<ConstraintCounts, std::string>> constraint_counts(HttpConnection& master,
                                                                           std::string name) {
  const auto state = co_await get_object(master, "v1/constraints/" + name);
  if (!state) co_return unexpected(state.error());
  co_return ConstraintCounts{integer_or_zero(*state, "waiting"),
                             integer_or_zero(*state, "running")};
}

asio::awaitable<Expected<std::string, std::string>> register_worker(HttpConnection& master,
                                                                    std::string url,
                                                                    int concurrency) {
  const nlohmann::json body = {
      {"url", url}, {"names", nlohmann::json::array({"*"})}, {"concurrency", concurrency}};
  const auto r = co_await master.request(Method::post, "v1/workers", body.dump(), true);
  if (r.status != 200 && r.status != 201) {
    co_return unexpected("POST /v1/workers: " + describe(r));
  }
  const auto reply = nlohmann::json::parse(r.body, nullptr, false);
  if (!reply.is_object() || !reply.contains("id") || !reply["id"].is_string()) {
    co_return unexpected("POST /v1/workers answered without an id: " + r.body);
  }
  co_return reply["id"].get<std::string>();
}

asio::awaitable<void> remove_worker(HttpConnection& master, std::string id) {
  co_await master.request(Method::del, "v1/workers/" + id, {}, true);
}

}  // namespace jq::bench
