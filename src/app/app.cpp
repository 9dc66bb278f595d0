#include "src/app/app.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <unistd.h>

#include <random>

#include "src/app/io_threads.hpp"
#include "src/app/open_files.hpp"
#include "src/app/routes.hpp"
#include "src/dispatch/dispatcher.hpp"
#include "src/dispatch/tls_contexts.hpp"
#include "src/events/result_waiters.hpp"
#include "src/events/subscriber.hpp"
#include "src/http/auth.hpp"
#include "src/http/handlers/jobs.hpp"
#include "src/http/server.hpp"
#include "src/metrics/metrics.hpp"
#include "src/redis/client.hpp"
#include "src/redis/embedded_server.hpp"
#include "src/redis/errc.hpp"
#include "src/scheduler/maintenance.hpp"
#include "src/scheduler/promoter.hpp"
#include "src/scheduler/scheduler.hpp"
#include "src/schedules/runner.hpp"
#include "src/schedules/schedule_store.hpp"
#include "src/store/constraint_set.hpp"
#include "src/store/constraint_store.hpp"
#include "src/store/dispatch_store.hpp"
#include "src/store/job_store.hpp"
#include "src/store/queue_store.hpp"
#include "src/store/reclassifier.hpp"
#include "src/workers/worker_store.hpp"

namespace jq::app {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

// A duration the config gives in seconds (> 0) as whole milliseconds, at least 1: a value below
// half a millisecond would otherwise become 0 (a timeout that fires at once).
milliseconds positive_ms(double seconds) {
  return milliseconds(std::max<std::int64_t>(1, std::llround(seconds * 1000)));
}

api::JobDefaults job_defaults(const config::Config& c) {
  return api::JobDefaults{c.defaults.max_retry, c.defaults.timeout(), c.defaults.unique_for()};
}

dispatch::DispatchOptions dispatch_options(const config::Config& c) {
  return dispatch::DispatchOptions{positive_ms(c.dispatch.max_busy_pause_s),
                                   c.limits.max_result_bytes};
}

unsigned io_threads_of(const config::Config& c) {
  return app::io_thread_count(c.io_threads, c.redis.url, std::thread::hardware_concurrency());
}

dispatch::PoolOptions pool_options(const config::Config& c) {
  return dispatch::PoolOptions{io_threads_of(c) == 1, positive_ms(c.dispatch.connect_timeout_s)};
}

http::ServerOptions server_options(const config::Config& c, std::shared_ptr<http::TlsIdentity> tls,
                                   std::function<void(std::string_view, int)> on_refused) {
  http::ServerOptions o;
  o.on_refused = std::move(on_refused);
  o.host = c.listen.host;
  o.port = c.listen.port;
  o.max_body_bytes = c.limits.max_body_bytes;
  o.access_log = c.log.access;
  o.max_connections = static_cast<std::size_t>(c.limits.max_connections);
  o.header_timeout = positive_ms(c.limits.header_timeout_s);
  o.read_timeout = positive_ms(c.limits.read_timeout_s);
  o.idle_timeout = positive_ms(c.limits.idle_timeout_s);
  o.tls = std::move(tls);
  o.one_io_thread = io_threads_of(c) == 1;
  return o;
}

store::RetryPolicy retry_policy(const config::Config& c) {
  return store::RetryPolicy{positive_ms(c.retry.base_s), positive_ms(c.retry.max_s), c.retry.jitter,
                            std::chrono::seconds(c.defaults.result_ttl_s)};
}

// Unique per process: slot leases and heartbeats are kept per master.
std::string make_master_id() {
  char host[256] = "master";
  gethostname(host, sizeof host - 1);
  std::random_device rd;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%08x", rd());
  return std::string(host) + ":" + std::to_string(getpid()) + ":" + suffix;
}

// Everything that lives while the io_context runs.
class Daemon {
 public:
  Daemon(const config::Config& config, const redis::Target& target,
         std::shared_ptr<http::TlsIdentity> tls)
      : config_(config),
        tls_(tls),
        io_(static_cast<int>(io_threads_of(config))),
        metrics_(static_cast<std::size_t>(config.metrics.max_job_names)),
        keys_(),  // jqmaster's prefix, which redis::Node's probe names too
        redis_(io_.get_executor(), target,
               redis::ConnectionOptions{.one_io_thread = io_threads_of(config) == 1},
               [this](redis::Client&) { return on_redis_connect(); }),
        subscriber_(io_.get_executor(), target.servers.front(), keys_.all_channels(config.shards),
                    redis_.router()),
        store_(redis_, keys_, config.shards, shared_now_, config.shard_run),
        queues_(redis_, keys_, config.shards, shared_now_),
        dispatch_store_(redis_, keys_, config.shards, shared_now_, retry_policy(config)),
        workers_(redis_, keys_, shared_now_, make_master_id()),
        constraints_(redis_, keys_, config.shards, shared_now_),
        constraint_cache_(io_.get_executor(), constraints_),
        reclassifier_(redis_, keys_, config.shards),
        schedules_(redis_, keys_, config.shards, shared_now_, job_defaults(config)),
        runner_(io_, schedules_),
        dispatcher_(io_, dispatch_store_, workers_, waiters_, metrics_, dispatch_options(config)),
        worker_tls_(std::make_shared<dispatch::TlsContexts>(config.tls.ca_file)),
        scheduler_(io_, redis_, queues_, dispatch_store_, workers_, dispatcher_, metrics_,
                   worker_tls_, pool_options(config),
                   std::chrono::microseconds(
                       static_cast<std::int64_t>(config.dispatch.reserve_ahead_s * 1e6))),
        promoter_(io_, redis_, dispatch_store_),
        maintenance_(io_, redis_, keys_, dispatch_store_, workers_, clock_, metrics_.clock_offset(),
                     [this] { scheduler_.leases_unsure(); }),
        server_(io_,
                server_options(config, std::move(tls),
                               [this](std::string_view method, int status) {
                                 // Refused before routing: a limit or not HTTP at all.
                                 metrics_.http_request("refused", method, status).inc();
                               }),
                [this](http::Request& r) { return router_.handle(r); }),
        signals_(io_, SIGINT, SIGTERM),
        hangups_(io_, SIGHUP) {
    add_routes(
        router_,
        RouteDeps{stopping_, store_, job_defaults(config), waiters_,
                  [this](const http::Pushed& pushed) { on_pushed(pushed); }, workers_, queues_,
                  [this] {
                    scheduler_.on_event(events::Event{events::EventKind::paused, {}});
                  },
                  [this] {
                    scheduler_.on_event(events::Event{events::EventKind::workers, {}});
                  },
                  metrics_, constraints_, [this] { return constraints_changed(); }, schedules_,
                  constraint_cache_});
    workers_.wait_for_clock(&clock_);
    store_.use_constraints(&constraint_cache_);
    store_.use_direct_dispatch(&scheduler_, &dispatch_store_.lost_reservations());
    store_.limit_appended_lists(config.limits.max_body_bytes);
    if (config.redis.replicas_ack > 0) {
      confirmed_redis_ = std::make_unique<redis::Client>(
          io_.get_executor(), target,
          redis::ConnectionOptions{.one_io_thread = io_threads_of(config) == 1});
      // At least 1 ms: WAIT's timeout 0 waits for ever.
      store_.confirm_pushes(config.redis.replicas_ack,
                            positive_ms(config.redis.replicas_ack_timeout_s), *confirmed_redis_);
    }
    schedules_.use_constraints(&constraint_cache_);
    router_.set_authenticator(http::Authenticator(config.auth));
    router_.set_observer([this](const http::Route* route, http::Method method, int status) {
      const std::string_view pattern =
          route != nullptr ? std::string_view(route->pattern) : std::string_view("unmatched");
      metrics_.http_request(pattern, http::to_string(method), status).inc();
    });
    // Every kind from the start, at 0, so alerts on a rate need no series to appear first.
    for (std::string_view kind : redis::error_kinds()) metrics_.redis_error(kind);
    for (redis::Client* client : {&redis_, confirmed_redis_.get()}) {
      if (client == nullptr) continue;
      client->time_commands(&metrics_.redis_command_duration());
      client->on_error([this](const std::error_code& ec) {
        if (const std::string_view kind = redis::error_kind(ec); !kind.empty()) {
          metrics_.redis_error(kind).inc();
        }
      });
    }
    subscriber_.add_listener([this](const events::Event& e) {
      if (e.kind == events::EventKind::result) {
        if (e.arg.empty()) {
          waiters_.notify_all();  // events may have been missed: every long poll looks again
        } else {
          waiters_.notify(e.arg);
        }
      }
      scheduler_.on_event(e);
      promoter_.on_event(e);
      constraint_cache_.on_event(e);
      runner_.on_event(e);
    });
  }

  // From any thread: stop in order with `exit_code` (the embedded Redis exited).
  void stop_soon(int exit_code) {
    asio::post(io_, [this, exit_code] { begin_shutdown(exit_code); });
  }
  // Called once when the stop begins, on an io thread.
  void on_stopping(std::function<void()> hook) { on_stopping_ = std::move(hook); }

  int run() {
    fit_open_files(static_cast<std::size_t>(config_.limits.max_connections));
    server_.start();  // throws when the address is taken: nothing else has started yet
    spdlog::info("jqmaster listening on {}:{} ({}) with {} io threads", config_.listen.host,
                 server_.port(), tls_ ? "https" : "http", io_threads_of(config_));
    if (tls_) spdlog::info("tls: serving the certificate {}", tls_->describe());
    redis_.start();
    if (confirmed_redis_) confirmed_redis_->start();
    subscriber_.start();
    scheduler_.start();
    promoter_.start();
    maintenance_.start();
    constraint_cache_.start();
    runner_.start();
    await_stop_signal();
    await_hangup();
    std::vector<std::thread> threads;
    for (unsigned i = 1; i < io_threads_of(config_); ++i)
      threads.emplace_back([this] { io_.run(); });
    io_.run();
    for (auto& t : threads) t.join();
    return exit_code_;
  }

 private:
  // A push this master answered is counted; the scheduler hears of it from the script's
  // announcement, like every other master's.
  void on_pushed(const http::Pushed& pushed) {
    metrics_.push_duration().observe(std::chrono::duration<double>(pushed.elapsed).count());
    for (const auto& [name, jobs] : pushed.names) metrics_.job(name).pushed.inc(jobs);
  }

  asio::awaitable<std::error_code> on_redis_connect() {
    auto ok = co_await store_.verify_shards(redis::Phase::handshake);
    if (!ok) co_return ok.error();
    if (!*ok) {
      begin_shutdown(kExitFailure);
      co_return std::make_error_code(std::errc::operation_canceled);
    }
    if (!eviction_policy_checked_.exchange(true)) {
      co_await queues_.check_eviction_policy(redis::Phase::handshake);
    }
    asio::co_spawn(io_, register_static_workers(), asio::detached);
    // Pushes wait for the constraints until this master has read them once (load_first): read
    // them as soon as Redis answers rather than at the loop's next retry.
    constraint_cache_.changed();
    if (!config_constraints_applied_.exchange(true)) {
      asio::co_spawn(io_, apply_config_constraints(), asio::detached);
    }
    if (!config_schedules_applied_.exchange(true)) {
      asio::co_spawn(io_, apply_config_schedules(), asio::detached);
    }
    co_return std::error_code{};
  }

  // The config file's constraints, created or replaced once per start (not again after a Redis
  // reconnect, which would undo changes made over the API since).
  asio::awaitable<void> apply_config_constraints() {
    for (const api::Constraint& c : config_.constraints) {
      auto applied = co_await constraints_.apply(c);
      if (!applied) {
        spdlog::error("constraint {} from the config: {}; applying again at the next connection",
                      c.name, applied.error().message);
        config_constraints_applied_ = false;
      }
    }
    if (!config_.constraints.empty()) co_await constraints_changed();
  }

  // The config file's schedules, created or replaced once per start, like its constraints.
  asio::awaitable<void> apply_config_schedules() {
    for (const api::Schedule& s : config_.schedules) {
      auto applied = co_await schedules_.apply(s);
      if (!applied) {
        spdlog::error("schedule {} from the config: {}; applying again at the next connection",
                      s.name, applied.error().message);
        config_schedules_applied_ = false;
      }
    }
  }

  // This master changed the constraints: its snapshot reloads before the change is answered (a
  // push that follows the answer is matched against it), and the jobs already stored are
  // matched again against it (one pass at a time; a change during a pass asks for another).
  asio::awaitable<void> constraints_changed() {
    co_await constraint_cache_.reload();
    reclassify_again_ = true;
    if (!reclassify_running_.exchange(true)) asio::co_spawn(io_, reclassify(), asio::detached);
  }

  // The snapshot a pass matches against: one holding the definitions as they are now in Redis
  // (loaded now if this master's is older: another master changed them since). A pass against an
  // older one would leave the stored jobs matched against what the change replaced: none is made.
  asio::awaitable<Expected<std::shared_ptr<const store::ConstraintSet>, store::StoreError>>
  changed_snapshot() {
    auto version = co_await constraints_.version();
    if (!version) co_return unexpected(std::move(version.error()));
    if (constraint_cache_.current()->version() < *version) co_await constraint_cache_.reload();
    auto snapshot = constraint_cache_.current();
    if (snapshot->version() < *version) {
      co_return unexpected(store::StoreError{
          store::StoreErrc::unavailable,
          fmt::format("the constraints could not be loaded (version {} in Redis, {} loaded)",
                      *version, snapshot->version())});
    }
    co_return snapshot;
  }

  // Waits `most`, or less when a change of the constraints comes (reclassify_again_).
  asio::awaitable<void> wait_for_change(asio::steady_timer& timer, std::chrono::seconds most) {
    const auto until = std::chrono::steady_clock::now() + most;
    while (!reclassify_again_ && std::chrono::steady_clock::now() < until) {
      timer.expires_after(std::chrono::milliseconds(100));
      co_await timer.async_wait(asio::use_awaitable);
    }
  }

  asio::awaitable<void> reclassify() {
    // A pass that failed (Redis away or full) goes again after this, doubling up to kMax: no
    // other master makes it, and the next change may be long in coming.
    constexpr std::chrono::seconds kFirst{1}, kMax{30};
    // After a pass that went through, one more this much later: a master that had not heard of
    // the change yet (the event takes milliseconds; a subscriber reconnecting, longer) may have
    // pushed jobs matched against the old definitions into shards the pass had read already.
    constexpr std::chrono::seconds kSettle{2};
    std::chrono::seconds after_failure = kFirst;
    bool settling = false;  // the pass under way is that later one
    do {
      reclassify_again_ = false;
      asio::steady_timer timer(io_);
      auto snapshot = co_await changed_snapshot();
      // An if, not ?: around a co_await: g++ 12 miscompiles that.
      Expected<std::int64_t, store::StoreError> changed = unexpected(store::StoreError{});
      if (snapshot) {
        changed = co_await reclassifier_.run(**snapshot);
      } else {
        changed = unexpected(std::move(snapshot.error()));
      }
      if (!changed) {
        spdlog::warn(
            "jobs already stored were not matched again against the changed "
            "constraints: {}; trying again in {} s",
            changed.error().message, after_failure.count());
        // A change meanwhile ends the wait (and the doubling): it is due within seconds.
        co_await wait_for_change(timer, after_failure);
        after_failure = reclassify_again_ ? kFirst : std::min(after_failure * 2, kMax);
        reclassify_again_ = true;
      } else {
        after_failure = kFirst;
        if (*changed > 0) {
          spdlog::info("{} stored jobs matched again against the changed constraints", *changed);
        }
        if (settling) {
          settling = false;
        } else {
          co_await wait_for_change(timer, kSettle);
          // A change meanwhile gets a pass of its own, and then its own later one.
          settling = !reclassify_again_;
          reclassify_again_ = true;
        }
      }
      reclassify_running_ = false;
    } while (reclassify_again_ && !reclassify_running_.exchange(true));
  }

  // Workers listed in the config file behave like registered ones without a heartbeat.
  asio::awaitable<void> register_static_workers() {
    for (const config::StaticWorker& w : config_.workers) {
      api::WorkerRegistration r;
      r.url = w.url;
      r.names = w.names;
      r.concurrency = w.concurrency;
      for (const auto& [k, v] : w.headers) r.headers.emplace_back(k, v);
      r.ca_file = w.ca_file;
      r.secret = w.secret;
      auto added = co_await workers_.add(std::move(r));
      if (!added) spdlog::error("static worker {}: {}", w.url, added.error().message);
    }
  }

  // SIGHUP reloads tls.cert and tls.key, for new connections; open ones keep theirs.
  void await_hangup() {
    hangups_.async_wait([this](const boost::system::error_code& ec, int) {
      if (ec) return;  // cancelled at shutdown
      reload_tls();
      await_hangup();
    });
  }

  void reload_tls() {
    if (!tls_) {
      spdlog::info("received SIGHUP: nothing to reload (no tls.cert configured)");
      return;
    }
    if (auto reloaded = tls_->reload(); !reloaded) {
      spdlog::error(
          "received SIGHUP: tls not reloaded, still serving the previous certificate: {}; fix "
          "the file and send SIGHUP again",
          reloaded.error());
      return;
    }
    spdlog::info("received SIGHUP: tls reloaded; new connections get the certificate {}",
                 tls_->describe());
  }

  // The first SIGINT or SIGTERM stops in order, within shutdown_grace; a second one (Ctrl-C
  // again) stops at once: what runs then is not lost, it runs again after its deadline, and the
  // embedded Redis, told by its parent's death, writes its append-only file and exits.
  void await_stop_signal() {
    signals_.async_wait([this](const boost::system::error_code& ec, int signo) {
      if (ec) return;
      const char* name = signo == SIGINT ? "SIGINT" : "SIGTERM";
      if (++stop_signals_ > 1) {
        spdlog::warn(
            "received {} again: stopping at once; the attempts still running run again "
            "once their deadline passes",
            name);
        spdlog::default_logger()->flush();
        std::_Exit(kExitFailure);
      }
      spdlog::info("received {}; shutting down (again to stop at once)", name);
      // A stop asked for: exit code 0, also when the embedded Redis stopped first (a service
      // manager stops every process of the service).
      exit_code_ = kExitOk;
      begin_shutdown(kExitOk);
      await_stop_signal();
    });
  }

  void begin_shutdown(int exit_code) {
    if (stopping_.exchange(true)) return;
    exit_code_ = exit_code;
    if (on_stopping_) on_stopping_();
    asio::co_spawn(io_, shutdown(), asio::detached);
  }

  // Until `open()` counts nothing or the deadline passes. Shutdown only, so a short poll is
  // simpler than a completion signal from every connection and attempt.
  template <class Count>
  asio::awaitable<void> drain(Count open, std::chrono::steady_clock::time_point deadline) {
    asio::steady_timer timer(io_);
    while (open() > 0 && std::chrono::steady_clock::now() < deadline) {
      timer.expires_after(milliseconds(10));
      co_await timer.async_wait(asio::use_awaitable);
    }
  }

  // The jobs of calls whose answer was lost and that the scheduler has not found yet (lost while
  // it stopped, as a reservation on its way whose connection broke, or lost in its last second)
  // are looked for once more and given back, rather than left to the reaper until their
  // deadline. Within `deadline` only (shutdown_grace): Redis may be coming back from the loss,
  // and what is not done by then is left to the reaper.
  asio::awaitable<void> give_back_lost(std::chrono::steady_clock::time_point deadline) {
    const auto in_time = [deadline] { return std::chrono::steady_clock::now() < deadline; };
    if (!dispatch_store_.lost_reservations().any() || !in_time()) co_return;
    co_await drain([this] { return redis_.ready() ? 0 : 1; }, deadline);
    if (!redis_.ready() || !in_time()) co_return;
    try {
      std::vector<store::ReservedJob> found =
          co_await dispatch_store_.find_lost_reservations(/*every=*/true);
      if (found.empty()) co_return;
      spdlog::warn(
          "{} job(s) taken by calls whose answer was lost go back to their queues before the "
          "stop, their attempt not counted",
          found.size());
      for (std::size_t i = 0; i < found.size(); ++i) {
        Expected<bool, store::StoreError> r =
            unexpected(store::StoreError{store::StoreErrc::unavailable, "shutdown_grace is over"});
        if (in_time()) r = co_await dispatch_store_.release(found[i], /*unsent=*/true);
        if (!r) {
          spdlog::warn("{} job(s) not given back ({}); they run again once their attempt times out",
                       found.size() - i, r.error().message);
          break;  // Redis away again, or no time left: the next ones would fare no better
        }
      }
    } catch (const std::exception& e) {
      spdlog::error("giving back the jobs of lost calls failed: {}", e.what());
    }
  }

  // Stop accepting, let requests in flight finish (up to shutdown_grace), then stop Redis I/O.
  asio::awaitable<void> shutdown() {
    server_.stop_accepting();
    server_.close_connections();
    waiters_.notify_all();  // long polls look once more and answer (jobs.cpp)
    hangups_.cancel();      // signals_ still waits: a second SIGINT or SIGTERM stops at once
    const auto deadline = std::chrono::steady_clock::now() +
                          milliseconds(static_cast<std::int64_t>(config_.shutdown_grace_s * 1000));
    co_await drain([this] { return server_.open_connections(); }, deadline);
    scheduler_.stop();
    promoter_.stop();
    maintenance_.stop();
    constraint_cache_.stop();
    runner_.stop();
    // A reservation's jobs become attempts when it is answered, and the scheduler's last step
    // may still send one.
    const auto dispatching = [this] {
      return dispatcher_.in_flight() + static_cast<std::size_t>(scheduler_.reserving()) +
             (scheduler_.stopped() ? 0 : 1);
    };
    co_await drain(dispatching, deadline);
    if (server_.open_connections() > 0 || dispatching() > 0) {
      spdlog::warn(
          "after shutdown_grace: {} connections and {} dispatches or reservations still open; "
          "their jobs run again once their deadline passes",
          server_.open_connections(), dispatching());
    }
    // Not while a search or a reservation is still on its way (the grace ran out): a job found
    // by both could be given back twice.
    if (dispatching() == 0) co_await give_back_lost(deadline);
    co_await workers_.flush_outcomes();  // the last attempts' counters
    subscriber_.stop();
    if (confirmed_redis_) confirmed_redis_->stop();
    redis_.stop();
    io_.stop();
  }

  const config::Config& config_;
  std::shared_ptr<http::TlsIdentity> tls_;  // the listener's certificate; null: plain HTTP
  asio::io_context io_;
  std::atomic<bool> stopping_{false};
  int stop_signals_ = 0;  // SIGINT and SIGTERM received: the second stops at once
  std::function<void()> on_stopping_;
  std::atomic<int> exit_code_{kExitOk};
  metrics::Metrics metrics_;
  // Every store's wall clock: this machine's set by Redis's at each heartbeat (Maintenance).
  SharedClock clock_;
  SystemClock shared_now_ = [this] { return clock_.now(); };
  redis::Keys keys_;
  redis::Client redis_;
  // redis.replicas_ack > 0: the pushes and their WAITs, on connections of their own
  // (JobStore::confirm_pushes); null otherwise.
  std::unique_ptr<redis::Client> confirmed_redis_;
  events::Subscriber subscriber_;
  events::ResultWaiters waiters_;
  store::JobStore store_;
  store::QueueStore queues_;
  store::DispatchStore dispatch_store_;
  workers::WorkerStore workers_;
  store::ConstraintStore constraints_;
  // The constraints this master matches pushed jobs against (ConstraintCache::current()).
  store::ConstraintCache constraint_cache_;
  store::Reclassifier reclassifier_;
  schedules::ScheduleStore schedules_;
  schedules::Runner runner_;
  std::atomic<bool> reclassify_running_{false};
  std::atomic<bool> reclassify_again_{false};
  std::atomic<bool> config_constraints_applied_{false};
  std::atomic<bool> config_schedules_applied_{false};
  std::atomic<bool> eviction_policy_checked_{false};
  dispatch::Dispatcher dispatcher_;
  std::shared_ptr<dispatch::TlsContexts> worker_tls_;  // one client context per CA file
  scheduler::Scheduler scheduler_;
  scheduler::Promoter promoter_;
  scheduler::Maintenance maintenance_;
  http::Router router_;
  http::Server server_;
  asio::signal_set signals_;
  asio::signal_set hangups_;
};

}  // namespace

int run(const config::Config& config) {
  // config::load refuses a non-loopback listen address without tokens unless allow_open is set.
  if (!config.auth.enforced()) {
    if (config.auth.allow_open) {
      spdlog::warn(
          "auth.allow_open is true and auth has no tokens: the API is open to anyone "
          "who can connect to {}",
          config::to_string(config.listen));
    } else {
      spdlog::info("no auth configured: listening on loopback only");
    }
  }
  std::shared_ptr<http::TlsIdentity> tls;
  if (config.tls.serves_https()) {
    auto loaded = http::TlsIdentity::load(http::TlsFiles{config.tls.cert, config.tls.key});
    if (!loaded) {
      spdlog::critical("config: {}", loaded.error());
      return kExitBadConfig;
    }
    tls = std::move(*loaded);
  }
  try {
    std::optional<redis::EmbeddedServer> embedded;
    std::string url = config.redis.url;
    if (url.empty()) {
      embedded.emplace(redis::EmbeddedOptions{config.redis.server_path, config.data_dir});
      url = embedded->url();
    }
    auto target = redis::parse_target(url);
    if (!target) {
      spdlog::critical("{}", target.error());
      return kExitBadConfig;
    }
    int code = kExitOk;
    {
      Daemon daemon(config, *target, std::move(tls));
      if (embedded) {
        daemon.on_stopping([&embedded] { embedded->expect_exit(); });
        // Exit code 1 even for a Redis someone stopped (status 0), so that a supervisor that
        // restarts on failure restarts it; a stop signal to the master makes it 0.
        embedded->on_exit([&daemon] { daemon.stop_soon(kExitFailure); });
      }
      try {
        code = daemon.run();
      } catch (...) {
        if (embedded) embedded->expect_exit();  // before the daemon it would tell is gone
        throw;
      }
      if (embedded) embedded->expect_exit();
    }
    if (embedded) embedded->stop();
    spdlog::info("jqmaster stopped");
    return code;
  } catch (const redis::DataDirError& e) {
    spdlog::critical("config: {}", e.what());
    return kExitBadConfig;
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return kExitFailure;
  }
}

}  // namespace jq::app
