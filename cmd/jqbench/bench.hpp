// The run's shared context: the options, one io_context run by --threads threads, the master's
// resolved address; plus the few calls on the master that set a scenario up (they are not the
// measured load) and a once-a-second progress line.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "cmd/jqbench/http_connection.hpp"
#include "cmd/jqbench/measure.hpp"
#include "cmd/jqbench/options.hpp"
#include "cmd/jqbench/worker_endpoint.hpp"
#include "common/expected.hpp"

namespace jq::bench {

namespace asio = boost::asio;

class Bench {
 public:
  explicit Bench(Options options);

  const Options& options() const { return options_; }
  asio::io_context& io() { return io_; }
  // What a coroutine or connection of its own runs on: a strand with several threads, the
  // io_context itself with one (which runs its handlers one at a time already; a strand's lock
  // and reference counts cost about 0.7 us per request, as in the master).
  asio::any_io_executor serial_executor();

  // A new connection to the master, on serial_executor().
  std::unique_ptr<HttpConnection> connect();
  // The built-in worker, bound on first use; it lives until the io_context has stopped.
  WorkerEndpoint& worker();

  // Runs `main` on the io threads until it returns; its value is the process's exit code.
  int run(std::function<asio::awaitable<int>()> main);

 private:
  Options options_;
  asio::io_context io_;
  asio::ip::tcp::endpoint master_;
  std::string host_header_;
  std::unique_ptr<WorkerEndpoint> worker_;  // after io_: destroyed first, with io_ stopped
};

asio::awaitable<void> sleep_for(Clock::duration d);

// An answer that was not the one expected, for an error message: the status and the start of
// the body, or why there was none.
std::string describe(const HttpResponse& r);

// Progress on stderr for long runs: the loops that wait for a scenario's work call tick(), which
// prints "  3 s: done 120000 (40000/s)" at most once a second.
class Progress {
 public:
  explicit Progress(bool enabled)
      : enabled_(enabled), start_(Clock::now()), next_(start_), last_(start_) {}
  void tick(std::string_view what, std::int64_t count);

 private:
  bool enabled_;
  Clock::time_point start_;
  Clock::time_point next_;  // no line before this
  Clock::time_point last_;  // of the last line, or when `what_` changed
  std::int64_t last_count_ = 0;
  std::string what_;
};

// Waits until `done()` holds, showing `count()` as `what`. Fails when `count()` stays the same
// for `stall`.
asio::awaitable<Expected<void, std::string>> wait_for(std::function<bool()> done,
                                                      std::function<std::int64_t()> count,
                                                      std::chrono::seconds stall,
                                                      Progress& progress, std::string what);

// Setting a scenario up on the master.
// Fails unless the master holds no ready, scheduled or running job: a scenario counts every job
// its worker answers, so leftovers from an earlier run would be counted too.
asio::awaitable<Expected<void, std::string>> expect_no_jobs(HttpConnection& master);
// POST /v1/workers {url, names: ["*"], concurrency}; the worker's id.
asio::awaitable<Expected<std::string, std::string>> register_worker(HttpConnection& master,
                                                                    std::string url,
                                                                    int concurrency);
asio::awaitable<void> remove_worker(HttpConnection& master, std::string id);
// `succeeded` of GET /v1/stats: jobs finished with a success, ever.
asio::awaitable<Expected<std::int64_t, std::string>> succeeded_jobs(HttpConnection& master);
// POST /v1/constraints {definition, as JSON}.
asio::awaitable<Expected<void, std::string>> create_constraint(HttpConnection& master,
                                                               std::string definition);
// DELETE /v1/constraints/{name}, which frees what it holds; one that is not there is no error.
asio::awaitable<Expected<void, std::string>> delete_constraint(HttpConnection& master,
                                                               std::string name);
// What constraint `name` holds back and lets run now (GET /v1/constraints/{name}).
struct ConstraintCounts {
  std::int64_t waiting = 0;
  std::int64_t running = 0;
};
asio::awaitable<Expected<ConstraintCounts, std::string>> constraint_counts(HttpConnection& master,
                                                                           std::string name);

}  // namespace jq::bench
