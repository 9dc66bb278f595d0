#include "src/redis/connection.hpp"

#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "common/serial_executor.hpp"
#include "src/redis/errc.hpp"

namespace jq::redis {
namespace {

using asio::use_awaitable;
using std::chrono::milliseconds;
constexpr milliseconds kWatchdogPeriod{250};

// What Redis sends a subscribed connection unasked: a message (PUBLISH, SPUBLISH), or the end of
// a sharded subscription whose slot left the node (a failover or resharding; we never send
// SUNSUBSCRIBE).
bool is_push(const Reply& reply) {
  if (!reply.is_array() || reply.elements.empty()) return false;
  const std::string& kind = reply.elements[0].str;
  return kind == "message" || kind == "smessage" || kind == "sunsubscribe";
}

}  // namespace

std::shared_ptr<Connection> Connection::create(asio::any_io_executor executor,
                                               ConnectionOptions options, Handshake handshake) {
  return std::shared_ptr<Connection>(
      new Connection(std::move(executor), std::move(options), std::move(handshake)));
}

Connection::Connection(asio::any_io_executor executor, ConnectionOptions options,
                       Handshake handshake)
    : serial_(serial_executor(executor, options.one_io_thread)),
      options_(std::move(options)),
      handshake_(std::move(handshake)),
      socket_(serial_),
      reader_exit_(serial_),
      backoff_timer_(serial_),
      watchdog_timer_(serial_) {}

Connection::~Connection() = default;

void Connection::start() {
  auto self = shared_from_this();
  asio::co_spawn(
      serial_, [self]() { return self->run(); }, asio::detached);
  asio::co_spawn(
      serial_, [self]() { return self->watchdog(); }, asio::detached);
}

void Connection::stop() {
  asio::dispatch(serial_, [self = shared_from_this()]() {
    self->state_ = State::stopped;
    self->ready_.store(false, std::memory_order_release);
    self->drop(Errc::shutting_down);
    self->reader_exit_.cancel();
    self->backoff_timer_.cancel();
    self->watchdog_timer_.cancel();
  });
}

void Connection::submit(std::string frame, std::size_t replies, bool handshake, ReplyCallback cb) {
  asio::dispatch(serial_, [self = shared_from_this(), frame = std::move(frame), replies, handshake,
                           cb = std::move(cb)]() mutable {
    self->enqueue(std::move(frame), replies, handshake, std::move(cb));
  });
}

void Connection::enqueue(std::string frame, std::size_t replies, bool handshake, ReplyCallback cb) {
  const bool accepted = handshake ? state_ == State::handshaking : state_ == State::ready;
  if (!accepted) {
    cb(unexpected(
        make_error_code(state_ == State::stopped ? Errc::shutting_down : Errc::not_connected)));
    return;
  }
  if (out_.empty()) {
    out_ = std::move(frame);  // the usual case: nothing waits to be written, no copy
  } else {
    out_ += frame;
  }
  pending_.push_back(Pending{std::move(cb), replies, {}, std::chrono::steady_clock::now()});
  maybe_write();
}

void Connection::maybe_write() {
  if (writing_ || out_.empty()) return;
  writing_ = true;
  std::swap(out_, writing_buf_);
  asio::async_write(
      socket_, asio::buffer(writing_buf_),
      [self = shared_from_this(), gen = generation_](boost::system::error_code ec, std::size_t) {
        if (gen != self->generation_) return;  // belongs to a dropped socket
        self->writing_ = false;
        self->writing_buf_.clear();
        if (ec) {
          self->drop(Errc::connection_lost);
          return;
        }
        self->maybe_write();
      });
}

void Connection::on_bytes(std::size_t n) {
  parser_->feed(read_buf_.data(), n);
  while (auto reply = parser_->next()) {
    if (options_.on_push && is_push(*reply)) {
      options_.on_push(std::move(*reply));
      continue;
    }
    if (pending_.empty()) {
      drop(Errc::protocol_error);  // a reply nobody asked for: the stream is out of step
      return;
    }
    Pending& p = pending_.front();
    if (p.remaining == 1 && p.collected.empty()) {
      auto cb = std::move(p.callback);
      pending_.pop_front();
      cb(std::move(*reply));
      continue;
    }
    p.collected.push_back(std::move(*reply));
    if (--p.remaining > 0) continue;
    Reply array;
    array.type = Reply::Type::array;
    array.elements = std::move(p.collected);
    auto cb = std::move(p.callback);
    pending_.pop_front();
    cb(std::move(array));
  }
  if (parser_->failed()) drop(Errc::protocol_error);
}

// Closes the socket and fails everything queued; the run loop reconnects.
void Connection::drop(std::error_code reason) {
  if (state_ != State::stopped) state_ = State::disconnected;
  ready_.store(false, std::memory_order_release);
  ++generation_;
  boost::system::error_code ignored;
  socket_.close(ignored);
  writing_ = false;
  out_.clear();
  writing_buf_.clear();
  fail_all(reason);
}

void Connection::reconnect_later(std::error_code reason) {
  asio::post(serial_, [self = shared_from_this(), reason] {
    if (self->state_ != State::ready) return;  // already on its way to another connection
    spdlog::warn("Redis at {} refused a write ({}); connecting again in {} ms",
                 self->options_.address.describe(), reason.message(),
                 self->options_.reconnect_max.count());
    self->hold_off_ = true;
    self->drop(reason);
  });
}

void Connection::fail_all(std::error_code reason) {
  auto pending = std::move(pending_);
  pending_.clear();
  for (auto& p : pending) p.callback(unexpected(reason));
}

// Every address the host name resolves to, in turn, until one takes the connection: "localhost"
// may give ::1 first to a Redis that listens on 127.0.0.1 only.
asio::awaitable<std::error_code> Connection::connect() {
  boost::system::error_code ec;
  std::vector<asio::generic::stream_protocol::endpoint> endpoints;
  const Address& a = options_.address;
  if (a.is_unix) {
    endpoints.emplace_back(asio::local::stream_protocol::endpoint(a.host));
  } else {
    asio::ip::tcp::resolver resolver(serial_);
    auto results = co_await resolver.async_resolve(a.host, std::to_string(a.port),
                                                   asio::redirect_error(use_awaitable, ec));
    if (ec) co_return ec;
    for (const auto& r : results) endpoints.emplace_back(r.endpoint());
    if (endpoints.empty()) co_return boost::system::error_code(asio::error::host_not_found);
  }
  asio::steady_timer deadline(serial_);
  deadline.expires_after(options_.connect_timeout);
  deadline.async_wait([this, self = shared_from_this()](boost::system::error_code e) {
    if (!e) {
      boost::system::error_code ignored;
      socket_.close(ignored);
    }
  });
  for (const auto& endpoint : endpoints) {
    boost::system::error_code ignored;
    if (socket_.is_open()) socket_.close(ignored);  // the address before refused it
    co_await socket_.async_connect(endpoint, asio::redirect_error(use_awaitable, ec));
    // Closed by the deadline or by stop(): no next address.
    if (!ec || ec == asio::error::operation_aborted || state_ == State::stopped ||
        std::chrono::steady_clock::now() >= deadline.expiry()) {
      break;
    }
  }
  deadline.cancel();
  if (!ec && !a.is_unix) socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  co_return ec;
}

asio::awaitable<void> Connection::read_loop(std::uint64_t generation) {
  for (;;) {
    boost::system::error_code ec;
    std::size_t n = co_await socket_.async_read_some(asio::buffer(read_buf_),
                                                     asio::redirect_error(use_awaitable, ec));
    if (generation != generation_) break;  // dropped elsewhere (watchdog, write error, stop)
    if (ec) {
      drop(Errc::connection_lost);
      break;
    }
    on_bytes(n);
    if (generation != generation_) break;
  }
  reader_done_ = true;
  reader_exit_.cancel();
}

asio::awaitable<void> Connection::run() {
  auto self = shared_from_this();
  milliseconds backoff = options_.reconnect_min;
  bool logged_down = false;
  while (state_ != State::stopped) {
    std::error_code ec = co_await connect();
    if (!ec && state_ != State::stopped) {
      parser_ = std::make_unique<ReplyParser>();
      state_ = State::handshaking;
      reader_done_ = false;
      asio::co_spawn(serial_, read_loop(generation_), asio::detached);
      ec = co_await handshake_(*this);
      if (!ec && state_ == State::handshaking) {
        state_ = State::ready;
        ready_.store(true, std::memory_order_release);
        spdlog::info("connected to Redis at {}", options_.address.describe());
        logged_down = false;
        backoff = options_.reconnect_min;
      } else if (state_ == State::handshaking) {
        drop(ec ? ec : make_error_code(Errc::connection_lost));
      }
      // Park until the reader ends: the socket is reused by the next attempt.
      while (!reader_done_) {
        reader_exit_.expires_at(asio::steady_timer::time_point::max());
        boost::system::error_code ignored;
        co_await reader_exit_.async_wait(asio::redirect_error(use_awaitable, ignored));
      }
    }
    if (state_ == State::stopped) break;
    if (!logged_down) {
      spdlog::warn("Redis at {} unavailable ({}); retrying with backoff",
                   options_.address.describe(), ec ? ec.message() : "connection closed");
      logged_down = true;
    }
    boost::system::error_code ignored;
    socket_.close(ignored);
    // A replica answers every connect at once: do not ask it twenty times a second.
    if (hold_off_) backoff = std::max(backoff, options_.reconnect_max);
    hold_off_ = false;
    backoff_timer_.expires_after(backoff);
    co_await backoff_timer_.async_wait(asio::redirect_error(use_awaitable, ignored));
    backoff = std::min(backoff * 2, options_.reconnect_max);
  }
}

asio::awaitable<void> Connection::watchdog() {
  auto self = shared_from_this();
  while (state_ != State::stopped) {
    watchdog_timer_.expires_after(kWatchdogPeriod);
    boost::system::error_code ec;
    co_await watchdog_timer_.async_wait(asio::redirect_error(use_awaitable, ec));
    if (!pending_.empty() &&
        std::chrono::steady_clock::now() - pending_.front().sent_at > options_.command_timeout) {
      spdlog::warn("Redis at {} did not answer within {} ms; reconnecting",
                   options_.address.describe(), options_.command_timeout.count());
      drop(Errc::timed_out);
    }
  }
}

}  // namespace jq::redis
