// One coroutine per connection, on its own strand: read a request, write the fixed answer, loop
// while keep-alive holds. The master sends one job per request and pools its connections, so
// the number of connections follows the registered concurrency.
#include "cmd/jqbench/worker_endpoint.hpp"

#include <atomic>
#include <mutex>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "cmd/jqbench/job_codec.hpp"

namespace jq::bench {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

struct WorkerEndpoint::Tally {
  explicit Tally(WorkerMode m) : mode(m) {}

  const WorkerMode mode;
  std::atomic<std::int64_t> answered{0};
  std::atomic<std::int64_t> malformed{0};
  std::atomic<std::int64_t> holding{0};
  std::atomic<std::int64_t> last_answer_ticks{0};  // steady_clock, since its epoch
  std::atomic<bool> record{false};
  std::mutex visits_mutex;
  std::vector<JobVisit> visits;

  void on_answer(std::string_view job_id, Clock::time_point received) {
    const auto answered_at = Clock::now();
    answered.fetch_add(1, std::memory_order_relaxed);
    const std::int64_t ticks = answered_at.time_since_epoch().count();
    std::int64_t last = last_answer_ticks.load(std::memory_order_relaxed);
    while (ticks > last && !last_answer_ticks.compare_exchange_weak(last, ticks)) {
    }
    if (!record.load(std::memory_order_relaxed)) return;
    std::lock_guard lock(visits_mutex);
    visits.push_back(JobVisit{std::string(job_id), received, answered_at});
  }

  // A timer that expires when the request must go on: nullptr when it is not held.
  std::shared_ptr<asio::steady_timer> hold(const asio::any_io_executor& executor) {
    std::lock_guard lock(hold_mutex);
    if (hold_next == 0) return nullptr;
    --hold_next;
    auto timer = std::make_shared<asio::steady_timer>(executor, Clock::time_point::max());
    held.push_back(timer);
    return timer;
  }

  void release() {
    std::lock_guard lock(hold_mutex);
    hold_next = 0;
    for (auto& timer : held) {
      asio::post(timer->get_executor(), [timer] { timer->cancel(); });
    }
    held.clear();
  }

  std::mutex hold_mutex;
  int hold_next = 0;
  std::vector<std::shared_ptr<asio::steady_timer>> held;
};

namespace {

using Tally = WorkerEndpoint::Tally;

constexpr std::uint32_t kHeaderLimit = 16 * 1024;
constexpr std::uint64_t kBodyLimit = 64 * 1024 * 1024;
constexpr std::chrono::seconds kIdleTimeout{300};  // the master keeps idle connections pooled

// finished_at, and the fixed answer, change once a second; each thread keeps its own copies.
struct Now {
  std::int64_t second = -1;
  std::string finished_at;
  std::string success_body;
};

const Now& now() {
  thread_local Now cached;
  const auto second = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  if (second != cached.second) {
    cached.second = second;
    cached.finished_at = iso8601_seconds(second);
    cached.success_body = encode_success(cached.finished_at);
  }
  return cached;
}

// The answer to one job request, by the worker's mode.
void answer(Tally& tally, const std::string& request, bhttp::response<bhttp::string_body>& res) {
  if (tally.mode == WorkerMode::noop) {
    res.result(bhttp::status::ok);
    res.body() = now().success_body;
    return;
  }
  auto decoded = answer_decoded(request, now().finished_at);
  if (decoded) {
    res.result(bhttp::status::ok);
    res.body() = std::move(*decoded);
    return;
  }
  tally.malformed.fetch_add(1, std::memory_order_relaxed);
  res.result(bhttp::status::bad_request);
  res.body() = std::move(decoded.error());
}

// Waits while the request is one of those the scenario holds.
asio::awaitable<void> wait_if_held(Tally& tally, tcp::socket& socket) {
  auto timer = tally.hold(socket.get_executor());
  if (!timer) co_return;
  tally.holding.fetch_add(1);
  boost::system::error_code ec;
  co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  tally.holding.fetch_sub(1);
}

asio::awaitable<void> session(tcp::socket socket, std::shared_ptr<Tally> tally) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  bhttp::response<bhttp::string_body> res{bhttp::status::ok, 11};
  res.set(bhttp::field::content_type, "application/msgpack");
  boost::system::error_code ec;
  auto on_error = asio::redirect_error(asio::use_awaitable, ec);
  for (;;) {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(kBodyLimit);
    stream.expires_after(kIdleTimeout);
    co_await bhttp::async_read(stream, buffer, parser, on_error);
    if (ec) break;
    const auto received = Clock::now();
    const auto& req = parser.get();
    co_await wait_if_held(*tally, stream.socket());
    stream.expires_after(kIdleTimeout);  // a held request may have used up the read's time
    answer(*tally, req.body(), res);
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    co_await bhttp::async_write(stream, res, on_error);
    if (ec) break;
    tally->on_answer(req["X-Jq-Job-Id"], received);
    if (!req.keep_alive()) break;
  }
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
}

}  // namespace

struct WorkerEndpoint::Impl {
  Impl(asio::io_context& context, WorkerMode mode)
      : io(context), acceptor(asio::make_strand(context)), tally(std::make_shared<Tally>(mode)) {}

  asio::awaitable<void> accept_loop() {
    for (;;) {
      boost::system::error_code ec;
      auto socket = co_await acceptor.async_accept(asio::make_strand(io),
                                                   asio::redirect_error(asio::use_awaitable, ec));
      if (ec == asio::error::operation_aborted) co_return;
      if (ec) continue;
      socket.set_option(tcp::no_delay(true), ec);
      auto executor = socket.get_executor();
      asio::co_spawn(executor, session(std::move(socket), tally), asio::detached);
    }
  }

  asio::io_context& io;
  tcp::acceptor acceptor;
  std::shared_ptr<Tally> tally;
  std::string url;
  bool started = false;
};

WorkerEndpoint::WorkerEndpoint(asio::io_context& io, const std::string& host, std::uint16_t port,
                               WorkerMode mode)
    : impl_(std::make_unique<Impl>(io, mode)) {
  const tcp::endpoint at(asio::ip::make_address(host), port);
  impl_->acceptor.open(at.protocol());
  impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
  impl_->acceptor.bind(at);
  impl_->acceptor.listen(asio::socket_base::max_listen_connections);
  const auto bound = impl_->acceptor.local_endpoint();
  const std::string address = bound.address().is_v6() ? "[" + bound.address().to_string() + "]"
                                                      : bound.address().to_string();
  impl_->url = "http://" + address + ":" + std::to_string(bound.port()) + "/";
}

WorkerEndpoint::~WorkerEndpoint() = default;

std::string WorkerEndpoint::url() const {
  return impl_->url;
}

void WorkerEndpoint::start() {
  if (std::exchange(impl_->started, true)) return;
  asio::co_spawn(impl_->acceptor.get_executor(), impl_->accept_loop(), asio::detached);
}

void WorkerEndpoint::record_visits(bool on) {
  impl_->tally->record.store(on);
}

std::vector<JobVisit> WorkerEndpoint::take_visits() {
  std::lock_guard lock(impl_->tally->visits_mutex);
  return std::exchange(impl_->tally->visits, {});
}

void WorkerEndpoint::hold_next(int n) {
  std::lock_guard lock(impl_->tally->hold_mutex);
  impl_->tally->hold_next += n;
}

void WorkerEndpoint::release_held() {
  impl_->tally->release();
}

std::int64_t WorkerEndpoint::holding() const {
  return impl_->tally->holding.load();
}

std::int64_t WorkerEndpoint::malformed() const {
  return impl_->tally->malformed.load(std::memory_order_relaxed);
}

std::int64_t WorkerEndpoint::answered() const {
  return impl_->tally->answered.load(std::memory_order_relaxed);
}

Clock::time_point WorkerEndpoint::last_answer() const {
  return Clock::time_point(Clock::duration(impl_->tally->last_answer_ticks.load()));
}

}  // namespace jq::bench
