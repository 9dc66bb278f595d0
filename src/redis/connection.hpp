// One pipelined connection to Redis. Asio owns the socket (TCP or unix); hiredis only encodes
// and parses. Commands are appended to one write buffer and their replies matched in order, so
// any number of coroutines can have commands in flight at once.
//
// The connection reconnects by itself with backoff. After each connect a handshake (AUTH,
// SELECT, FUNCTION LOAD, ...) runs before other commands are accepted; while not ready, commands
// fail at once with Errc::not_connected so callers can answer 503 instead of waiting.
// A watchdog resets the connection when the oldest command waits longer than the command
// timeout, so a hung server cannot hold requests forever.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <system_error>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "common/expected.hpp"
#include "src/redis/address.hpp"
#include "src/redis/reply.hpp"
#include "src/redis/resp.hpp"

namespace jq::redis {

namespace asio = boost::asio;

using ReplyResult = Expected<Reply, std::error_code>;

// A move-only callback for one reply (std::function needs copyable targets; Asio's handlers
// are move-only).
class ReplyCallback {
 public:
  ReplyCallback() = default;
  template <class F>
  explicit ReplyCallback(F f) : impl_(std::make_unique<Impl<F>>(std::move(f))) {}
  void operator()(ReplyResult r) {
    auto impl = std::move(impl_);
    impl->call(std::move(r));
  }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual void call(ReplyResult r) = 0;
  };
  template <class F>
  struct Impl : Base {
    explicit Impl(F fn) : f(std::move(fn)) {}
    void call(ReplyResult r) override { f(std::move(r)); }
    F f;
  };
  std::unique_ptr<Base> impl_;
};

struct ConnectionOptions {
  Address address{};
  std::chrono::milliseconds connect_timeout{2'000};
  std::chrono::milliseconds command_timeout{10'000};
  std::chrono::milliseconds reconnect_min{50};
  std::chrono::milliseconds reconnect_max{2'000};
  // Subscriber connections: pub/sub messages (["message" or "smessage", channel, payload]) and
  // server-sent ["sunsubscribe", channel, count] go here, on the connection's executor, instead of
  // being matched to a command.
  std::function<void(Reply)> on_push{};
  // One thread runs the io_context: the connection needs no strand (common/serial_executor.hpp),
  // and a command sent from that thread is queued and written at once instead of after a hop.
  bool one_io_thread = false;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Runs after every connect; a non-zero error drops the connection and retries later.
  using Handshake = std::function<asio::awaitable<std::error_code>(Connection&)>;

  static std::shared_ptr<Connection> create(asio::any_io_executor executor,
                                            ConnectionOptions options, Handshake handshake);
  ~Connection();

  void start();
  void stop();
  bool ready() const { return ready_.load(std::memory_order_acquire); }
  // Drops a ready connection (what it has in flight fails with `reason`) and connects again after
  // the longest backoff, resolving the address again: the server it reached became a replica, and
  // the name may now lead to the new primary. Callable from any thread.
  void reconnect_later(std::error_code reason);

  // Sends `frame` (one or more RESP-encoded commands) and completes with the reply, or with an
  // array of `replies` replies when the frame holds several commands. Signature: void(ReplyResult).
  template <class Token>
  auto async_exec(std::string frame, std::size_t replies, Token&& token) {
    return start_exec(std::move(frame), replies, /*handshake=*/false, std::forward<Token>(token));
  }
  // The same, allowed only while the handshake runs (used by the Handshake function).
  template <class Token>
  auto async_exec_handshake(std::string frame, std::size_t replies, Token&& token) {
    return start_exec(std::move(frame), replies, /*handshake=*/true, std::forward<Token>(token));
  }

 private:
  enum class State { disconnected, handshaking, ready, stopped };
  struct Pending {
    ReplyCallback callback;
    std::size_t remaining;
    std::vector<Reply> collected;
    std::chrono::steady_clock::time_point sent_at;
  };

  Connection(asio::any_io_executor executor, ConnectionOptions options, Handshake handshake);

  template <class Token>
  auto start_exec(std::string frame, std::size_t replies, bool handshake, Token&& token) {
    return asio::async_initiate<Token, void(ReplyResult)>(
        [this](auto handler, std::string frame, std::size_t replies, bool handshake) {
          auto ex = asio::get_associated_executor(handler, serial_);
          ReplyCallback cb([h = std::move(handler), ex](ReplyResult r) mutable {
            asio::post(ex, [h = std::move(h), r = std::move(r)]() mutable { h(std::move(r)); });
          });
          submit(std::move(frame), replies, handshake, std::move(cb));
        },
        token, std::move(frame), replies, handshake);
  }

  void submit(std::string frame, std::size_t replies, bool handshake, ReplyCallback cb);
  void enqueue(std::string frame, std::size_t replies, bool handshake, ReplyCallback cb);
  void maybe_write();
  void on_bytes(std::size_t n);
  void drop(std::error_code reason);
  void fail_all(std::error_code reason);
  asio::awaitable<void> run();
  asio::awaitable<std::error_code> connect();
  asio::awaitable<void> read_loop(std::uint64_t generation);
  asio::awaitable<void> watchdog();

  asio::any_io_executor serial_;  // a strand, or the io_context's executor with one thread
  ConnectionOptions options_;
  Handshake handshake_;
  asio::generic::stream_protocol::socket socket_;
  asio::steady_timer reader_exit_;
  asio::steady_timer backoff_timer_;
  asio::steady_timer watchdog_timer_;
  std::atomic<bool> ready_{false};
  State state_ = State::disconnected;
  std::uint64_t generation_ = 0;
  bool reader_done_ = true;
  bool hold_off_ = false;  // reconnect_later: wait reconnect_max before the next connect
  bool writing_ = false;
  std::string out_;          // frames waiting to be written
  std::string writing_buf_;  // frames being written
  std::deque<Pending> pending_;
  std::unique_ptr<ReplyParser> parser_;
  std::array<char, 64 * 1024> read_buf_{};
};

}  // namespace jq::redis
