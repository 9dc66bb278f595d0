// One Redis server behind one pipelined, self-healing connection: the handshake (AUTH, SELECT,
// FUNCTION LOAD of the script library when Redis lacks it), scripts by FCALL (the library loaded
// again when Redis lost it), and refusals as errors.
// redis::Client uses one Node for a single Redis and one per master for a Redis Cluster.
//
// An error reply by which Redis refuses to serve now (-OOM, -LOADING, ...: see refusal_of) comes
// back as that Errc, not as a reply, so callers treat it like a lost connection; for a pipeline,
// any command refused fails the whole.
#pragma once

#include <atomic>
#include <cstdint>
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

// The frame of one script call: FCALL of its function, or with `by_source` EVAL of its source
// (eval_source(): a Redis over maxmemory that lacks the library).
void append_script(std::string& frame, const Script& s, const ScriptCall& call,
                   bool by_source = false);

// An array reply with no elements.
Reply empty_array();

class Node {
 public:
  // Runs at the end of every handshake, after AUTH, SELECT and FUNCTION LOAD; an error drops the
  // connection (and is retried).
  using OnConnect = std::function<asio::awaitable<std::error_code>(Node&)>;

  // `load_scripts`: load the script library on connect when Redis lacks it (not needed on a
  // subscriber connection).
  Node(asio::any_io_executor executor, ConnectionOptions options, OnConnect on_connect = {},
       bool load_scripts = true);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  void start();
  void stop();
  bool ready() const;
  // A single Redis (not a cluster node, whose client follows the slot map instead): when it
  // answers READONLY or MASTERDOWN it became a replica, and the connection is made again, to
  // whatever the address names by then (a failover that moved a DNS name or a socket path).
  void leave_replicas() { leave_replicas_ = true; }
  const Address& address() const { return options_.address; }
  // Whether the server ran a script whose keys span hash tags (asked at each handshake; false
  // before the first): not a cluster node, nor a proxy in front of a sharded store.
  bool scripts_span_tags() const { return scripts_span_tags_; }
  // Whether scripts go by EVAL of their source on this connection: Redis lacked the library and
  // refused to load it for memory. Every couple of seconds a call first tries to load it again;
  // FCALL again once Redis takes it (or from the next connection).
  bool scripts_by_source() const { return scripts_by_source_; }

  asio::awaitable<ReplyResult> command(std::vector<std::string> args, Phase phase = Phase::ready);
  // Several commands in one write; the reply is an array with one element per command.
  asio::awaitable<ReplyResult> pipeline(std::vector<std::vector<std::string>> commands,
                                        Phase phase = Phase::ready);
  asio::awaitable<ReplyResult> eval(ScriptCall call, Phase phase = Phase::ready);
  // The script, then the `extra` commands, in one write; the reply is an array with the script's
  // reply, then one per command. When Redis lost the library, it is loaded again
  // (reload_library) and all of them are sent again (the commands may be about the call, as a
  // WAIT for its writes).
  asio::awaitable<ReplyResult> eval_with(ScriptCall call,
                                         std::vector<std::vector<std::string>> extra,
                                         Phase phase = Phase::ready);
  // Scripts by FCALL, then the `extra` commands, in one write; the reply is an array with one
  // element per script, then per command. A script Redis no longer has is sent again alone, after
  // the library, as eval() does.
  asio::awaitable<ReplyResult> eval_pipeline(std::vector<ScriptCall> calls,
                                             std::vector<std::vector<std::string>> extra = {},
                                             Phase phase = Phase::ready);
  // Scripts that run all or none: MULTI, the scripts, EXEC, then the `extra` commands, in one
  // write. Redis refuses the whole transaction when it refuses any part (for memory: checked as
  // each script is queued and again at EXEC, and the scripts inside see the state of EXEC), and
  // runs it with nothing between. The reply is an array with one element per script, then per
  // command. When Redis lost the library, none of them ran: it is loaded again and all are sent
  // again.
  asio::awaitable<ReplyResult> eval_atomic(std::vector<ScriptCall> calls,
                                           std::vector<std::vector<std::string>> extra,
                                           Phase phase = Phase::ready);
  // Loads the script library on a Redis that lost it (restarted without persistence, FUNCTION
  // FLUSH, deleted by another build's sweep); refused for memory, scripts go by their source from
  // now on, as after such a handshake. Another refusal is logged: the calls that follow meet it.
  asio::awaitable<void> reload_library(Phase phase = Phase::ready);
  // `frame` holds `replies` encoded commands (> 0); the answer is an array of their replies
  // whatever their number. Timed and checked for refusals like every call; no library reload.
  asio::awaitable<ReplyResult> exec(std::string frame, std::size_t replies,
                                    Phase phase = Phase::ready);

  // Times every command, pipeline and script call (each retry after a reload too) into `histogram`,
  // in seconds from sending to the answer; null: not timed. Set before start().
  void time_commands(metrics::Histogram* histogram) { command_duration_ = histogram; }
  // Called with every failed call's error (a refusal or a connection failure), on the thread
  // that awaited the call. Set before start().
  void on_error(std::function<void(const std::error_code&)> hook) { on_error_ = std::move(hook); }

 private:
  asio::awaitable<ReplyResult> send(std::string frame, std::size_t replies, Phase phase);
  asio::awaitable<ReplyResult> raw(std::string frame, std::size_t replies, Phase phase);
  asio::awaitable<std::error_code> handshake();
  asio::awaitable<ReplyResult> load_library(Phase phase);
  // Redis refused the library for memory: scripts go by source from now on (said in the log),
  // and a load is tried again after a while.
  void scripts_by_source_from_now();
  // Whether this call should try to load the library first (by source, and the time has come;
  // one caller at a time).
  bool library_retry_due();
  asio::awaitable<void> retry_library_load();

  ConnectionOptions options_;
  OnConnect on_connect_;
  bool load_scripts_;
  std::atomic<bool> scripts_span_tags_ = false;
  bool leave_replicas_ = false;
  std::atomic<bool> scripts_by_source_ = false;
  std::atomic<std::int64_t> next_library_retry_ms_ = 0;  // steady clock
  std::shared_ptr<Connection> connection_;
  metrics::Histogram* command_duration_ = nullptr;
  std::function<void(const std::error_code&)> on_error_;
};

}  // namespace jq::redis
