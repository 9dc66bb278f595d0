// The engine's door to Redis: commands and scripts over one pipelined, self-healing connection.
// Scripts go by EVALSHA; a NOSCRIPT answer (Redis restarted, SCRIPT FLUSH) is retried once with
// EVAL, which also puts the script back in Redis's cache. An error reply by which Redis refuses
// to serve now (-OOM, -LOADING, ...: see refusal_of) comes back as that Errc, not as a reply, so
// callers treat it like a lost connection; for a pipeline, any command refused fails the whole.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "src/redis/connection.hpp"
#include "src/redis/scripts.hpp"

namespace jq::metrics {
class Histogram;
}

namespace jq::redis {

// Commands may run during the handshake (from the OnConnect hook) or once the client is ready.
enum class Phase { ready, handshake };

class Client {
 public:
  // Runs at the end of every handshake, after AUTH, SELECT and SCRIPT LOAD; an error drops the
  // connection (and is retried), unless the hook decides the process must stop.
  using OnConnect = std::function<asio::awaitable<std::error_code>(Client&)>;

  // `load_scripts`: SCRIPT LOAD every script on connect (not needed on a subscriber connection).
  Client(asio::any_io_executor executor, ConnectionOptions options, OnConnect on_connect = {},
         bool load_scripts = true);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void start();
  void stop();
  bool ready() const;
  // The executor its connection runs on: where work tied to this Redis can have a strand.
  const asio::any_io_executor& executor() const { return executor_; }

  asio::awaitable<ReplyResult> command(std::vector<std::string> args, Phase phase = Phase::ready);
  // Several commands in one write; the reply is an array with one element per command.
  asio::awaitable<ReplyResult> pipeline(std::vector<std::vector<std::string>> commands,
                                        Phase phase = Phase::ready);
  asio::awaitable<ReplyResult> eval(ScriptCall call, Phase phase = Phase::ready);
  // Scripts by EVALSHA, then the `extra` commands, in one write; the reply is an array with one
  // element per script, then per command. A script Redis no longer has is sent again alone, by
  // its source, as eval() does.
  asio::awaitable<ReplyResult> eval_pipeline(std::vector<ScriptCall> calls,
                                             std::vector<std::vector<std::string>> extra = {},
                                             Phase phase = Phase::ready);

  // Times every command, pipeline and script call (each EVAL retry too) into `histogram`, in
  // seconds from sending to the answer; null: not timed. Set before start().
  void time_commands(metrics::Histogram* histogram) { command_duration_ = histogram; }
  // Called with every failed call's error (a refusal or a connection failure), on the thread
  // that awaited the call. Set before start().
  void on_error(std::function<void(const std::error_code&)> hook) { on_error_ = std::move(hook); }

 private:
  asio::awaitable<ReplyResult> send(std::string frame, std::size_t replies, Phase phase);
  // send() for `replies` > 0 commands, answered as an array whatever their number.
  asio::awaitable<ReplyResult> send_many(std::string frame, std::size_t replies, Phase phase);
  asio::awaitable<ReplyResult> exec(std::string frame, std::size_t replies, Phase phase);
  asio::awaitable<std::error_code> handshake();

  asio::any_io_executor executor_;
  ConnectionOptions options_;
  OnConnect on_connect_;
  bool load_scripts_;
  std::shared_ptr<Connection> connection_;
  metrics::Histogram* command_duration_ = nullptr;
  std::function<void(const std::error_code&)> on_error_;
};

}  // namespace jq::redis
