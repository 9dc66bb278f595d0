#include "src/app/app.hpp"

#include <atomic>
#include <cmath>
#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include "src/http/handlers/health.hpp"
#include "src/http/handlers/jobs.hpp"
#include "src/http/server.hpp"
#include "src/redis/client.hpp"
#include "src/redis/embedded_server.hpp"
#include "src/store/job_store.hpp"

namespace jq::app {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

api::JobDefaults job_defaults(const config::Config& c) {
  return api::JobDefaults{
      c.defaults.max_retry,
      milliseconds(static_cast<std::int64_t>(std::ceil(c.defaults.timeout_s * 1000)))};
}

http::ServerOptions server_options(const config::Config& c) {
  http::ServerOptions o;
  o.host = c.listen.host;
  o.port = c.listen.port;
  o.max_body_bytes = c.limits.max_body_bytes;
  o.max_connections = static_cast<std::size_t>(c.limits.max_connections);
  o.read_timeout = milliseconds(static_cast<std::int64_t>(c.limits.read_timeout_s * 1000));
  o.idle_timeout = milliseconds(static_cast<std::int64_t>(c.limits.idle_timeout_s * 1000));
  return o;
}

unsigned io_thread_count(const config::Config& c) {
  if (c.io_threads > 0) return static_cast<unsigned>(c.io_threads);
  return std::max(1u, std::thread::hardware_concurrency());
}

// Everything that lives while the io_context runs.
class Daemon {
 public:
  Daemon(const config::Config& config, redis::Address address)
      : config_(config),
        io_(static_cast<int>(io_thread_count(config))),
        redis_(io_.get_executor(), redis::ConnectionOptions{std::move(address)},
               [this](redis::Client&) { return on_redis_connect(); }),
        store_(redis_, redis::Keys{}, config.shards, [] { return std::chrono::system_clock::now(); }),
        server_(io_, server_options(config), [this](http::Request& r) { return router_.handle(r); }),
        signals_(io_, SIGINT, SIGTERM) {
    http::add_health_routes(router_, redis_, stopping_);
    http::add_job_routes(router_, store_, job_defaults(config));
  }

  int run() {
    server_.start();  // throws when the address is taken: nothing else has started yet
    spdlog::info("jqmaster listening on {}:{} with {} io threads", config_.listen.host,
                 server_.port(), io_thread_count(config_));
    redis_.start();
    signals_.async_wait([this](const boost::system::error_code& ec, int signo) {
      if (!ec) {
        spdlog::info("received {}; shutting down", signo == SIGINT ? "SIGINT" : "SIGTERM");
        begin_shutdown(kExitOk);
      }
    });
    std::vector<std::thread> threads;
    for (unsigned i = 1; i < io_thread_count(config_); ++i) threads.emplace_back([this] { io_.run(); });
    io_.run();
    for (auto& t : threads) t.join();
    return exit_code_;
  }

 private:
  asio::awaitable<std::error_code> on_redis_connect() {
    auto ok = co_await store_.verify_shards(redis::Phase::handshake);
    if (!ok) co_return ok.error();
    if (!*ok) {
      begin_shutdown(kExitFailure);
      co_return std::make_error_code(std::errc::operation_canceled);
    }
    co_return std::error_code{};
  }

  void begin_shutdown(int exit_code) {
    if (stopping_.exchange(true)) return;
    exit_code_ = exit_code;
    asio::co_spawn(io_, shutdown(), asio::detached);
  }

  // Stop accepting, let requests in flight finish (up to shutdown_grace), then stop Redis I/O.
  asio::awaitable<void> shutdown() {
    server_.stop_accepting();
    server_.close_connections();
    signals_.cancel();
    const auto deadline = std::chrono::steady_clock::now() +
                          milliseconds(static_cast<std::int64_t>(config_.shutdown_grace_s * 1000));
    asio::steady_timer timer(io_);
    while (server_.open_connections() > 0 && std::chrono::steady_clock::now() < deadline) {
      timer.expires_after(milliseconds(10));
      co_await timer.async_wait(asio::use_awaitable);
    }
    if (server_.open_connections() > 0) {
      spdlog::warn("{} connections still open after shutdown_grace; closing them",
                   server_.open_connections());
    }
    redis_.stop();
    io_.stop();
  }

  const config::Config& config_;
  asio::io_context io_;
  std::atomic<bool> stopping_{false};
  int exit_code_ = kExitOk;
  redis::Client redis_;
  store::JobStore store_;
  http::Router router_;
  http::Server server_;
  asio::signal_set signals_;
};

}  // namespace

int run(const config::Config& config) {
  // config::load refuses a non-loopback listen address without auth unless allow_open is set.
  if (!config.auth.configured) {
    spdlog::info(config.listen.is_loopback()
                     ? "no auth configured: listening on loopback only"
                     : "no auth configured and auth.allow_open is true: serving without auth");
  }
  try {
    std::optional<redis::EmbeddedServer> embedded;
    std::string url = config.redis.url;
    if (url.empty()) {
      embedded.emplace(redis::EmbeddedOptions{config.redis.server_path, config.data_dir});
      url = embedded->url();
    }
    auto address = redis::parse_address(url);
    if (!address) {
      spdlog::critical("{}", address.error());
      return kExitBadConfig;
    }
    int code = Daemon(config, std::move(*address)).run();
    if (embedded) embedded->stop();
    spdlog::info("jqmaster stopped");
    return code;
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return kExitFailure;
  }
}

}  // namespace jq::app
