// The engine's door to Redis, one client with a mode: a single Redis (one redis::Node: one
// pipelined, self-healing connection) or a Redis Cluster (redis::Cluster: a Node per master,
// each command routed by its first key's slot, a script by its first KEYS entry). The stores
// and the scripts need not know which: every script's keys can share one shard's hash tag, so
// one node serves each call, and a batch that spans shards is split per node and its answers
// put back in order. One exception, asked with scripts_span_tags(): on one Redis the scripts of
// the dispatch path also take the constraints' keys ({c}), saving a round trip per batch.
//
// Scripts go by FCALL, as functions of one library (lua/, loaded at connect); an answer that
// Redis lacks it (restarted without persistence, FUNCTION FLUSH, a node that never had it) loads
// it on that node and calls again. An error reply by which Redis refuses to serve now (-OOM,
// -LOADING, ...: see refusal_of) comes back as that Errc, not as a reply, so callers treat it
// like a lost connection; for a pipeline, any command refused fails the whole.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "src/redis/cluster.hpp"

namespace jq::redis {

struct Target;

class Client {
 public:
  // Runs at the end of every handshake of a single Redis (after AUTH, SELECT and FUNCTION LOAD),
  // or once a cluster's map is known and again after its masters changed; an error is retried.
  using OnConnect = std::function<asio::awaitable<std::error_code>(Client&)>;

  // A single Redis at options.address.
  Client(asio::any_io_executor executor, ConnectionOptions options, OnConnect on_connect = {},
         bool load_scripts = true);
  // What redis.url names: a single Redis, or a cluster's seeds (`options` give the timeouts
  // for every node's connection).
  Client(asio::any_io_executor executor, const Target& target, ConnectionOptions options,
         OnConnect on_connect = {}, bool load_scripts = true);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void start();
  void stop();
  bool ready() const;
  bool cluster() const { return cluster_ != nullptr; }
  // Whether a script may touch keys of several hash tags: a single Redis that ran such a script
  // at its handshake (known once it is ready; a one-node cluster behind redis:// refuses it).
  bool scripts_span_tags() const { return single_ && single_->scripts_span_tags(); }
  // The executor its connections run on: where work tied to this Redis can have a strand.
  const asio::any_io_executor& executor() const { return executor_; }

  asio::awaitable<ReplyResult> command(std::vector<std::string> args, Phase phase = Phase::ready);
  // Several independent commands; the reply is an array with one element per command. On a
  // cluster the commands for different nodes run at once, in no order between nodes.
  asio::awaitable<ReplyResult> pipeline(std::vector<std::vector<std::string>> commands,
                                        Phase phase = Phase::ready);
  asio::awaitable<ReplyResult> eval(ScriptCall call, Phase phase = Phase::ready);
  // Scripts, then the `extra` commands, as one pipeline; the reply is an array with one element
  // per script, then per command.
  asio::awaitable<ReplyResult> eval_pipeline(std::vector<ScriptCall> calls,
                                             std::vector<std::vector<std::string>> extra = {},
                                             Phase phase = Phase::ready);
  // Scripts as one pipeline, each with its own reply or error: on a cluster, a script whose node
  // cannot serve it fails alone and the others' replies are kept; one Redis answers all or none.
  // For reads, which can be asked again.
  asio::awaitable<std::vector<ReplyResult>> eval_each(std::vector<ScriptCall> calls);
  // The same for commands.
  asio::awaitable<std::vector<ReplyResult>> pipeline_each(
      std::vector<std::vector<std::string>> commands);
  // The script, then WAIT `replicas` `timeout` on the node that ran it, in one write: the
  // script's reply, or Errc::not_replicated when fewer replicas confirmed it in time (the
  // write stays done). `replicas` 0: the script alone.
  asio::awaitable<ReplyResult> eval_replicated(ScriptCall call, int replicas,
                                               std::chrono::milliseconds timeout);

  // Scripts that run all or none, then WAIT `replicas` (> 0) `timeout`: on one Redis a
  // MULTI/EXEC (Node::eval_atomic); the reply is an array with one element per script, or
  // Errc::not_replicated as eval_replicated. A cluster has no transaction across the slots of
  // different shards: Errc::cross_slot, nothing sent (ask scripts_span_tags() first: a cluster
  // node reached as one Redis refuses such a transaction too).
  asio::awaitable<ReplyResult> eval_atomic(std::vector<ScriptCall> calls, int replicas = 0,
                                           std::chrono::milliseconds timeout = {});

  // `commands` on every master (the one server of a single Redis), each answered as an array,
  // with the node's address for messages.
  using NodeReplies = Cluster::NodeReplies;
  asio::awaitable<std::vector<NodeReplies>> on_every_master(
      std::vector<std::vector<std::string>> commands, Phase phase = Phase::ready);

  // The cluster's router (for the subscriber's per-node connections); null for a single Redis.
  Cluster* router() { return cluster_.get(); }

  // Times every command, pipeline and script call (each retry after a reload too) into
  // `histogram`, in seconds from sending to the answer; null: not timed. Set before start().
  void time_commands(metrics::Histogram* histogram);
  // Called with every failed call's error (a refusal or a connection failure), on the thread
  // that awaited the call. Set before start().
  void on_error(std::function<void(const std::error_code&)> hook);

 private:
  asio::awaitable<ReplyResult> routed(std::vector<ClusterOp> ops, bool as_array);
  asio::awaitable<std::vector<ReplyResult>> routed_each(
      std::vector<ClusterOp> ops, std::vector<std::optional<std::error_code>> refused);
  ReplyResult confirmed(ReplyResult replies, std::size_t scripts, int replicas);

  asio::any_io_executor executor_;
  OnConnect on_connect_;
  std::unique_ptr<Node> single_;
  std::unique_ptr<Cluster> cluster_;
  std::function<void(const std::error_code&)> on_error_;
};

}  // namespace jq::redis
