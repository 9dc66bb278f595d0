#include "src/redis/client.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include <spdlog/spdlog.h>

#include "src/redis/address.hpp"
#include "src/redis/cluster.hpp"
#include "src/redis/errc.hpp"
#include "src/redis/slot.hpp"

namespace jq::redis {
namespace {

// The slot of a script call's keys; -1 without keys. Keys in several slots cannot run on a
// cluster (Redis would answer CROSSSLOT): every script's keys must share one hash tag.
Expected<int, std::error_code> script_slot(const ScriptCall& call) {
  if (call.keys.empty()) return -1;
  const int slot = key_slot(call.keys.front());
  for (const std::string& key : call.keys) {
    if (key_slot(key) != slot) {
      spdlog::error("script {} was given keys of different hash slots ({} and {}): not sent",
                    script(call.id).file, call.keys.front(), key);
      return unexpected(make_error_code(Errc::cross_slot));
    }
  }
  return slot;
}

asio::awaitable<ReplyResult> failed(std::error_code ec) {
  co_return unexpected(ec);
}

}  // namespace

Client::Client(asio::any_io_executor executor, ConnectionOptions options, OnConnect on_connect,
               bool load_scripts)
    : executor_(executor), on_connect_(std::move(on_connect)) {
  Node::OnConnect hook;
  if (on_connect_) hook = [this](Node&) { return on_connect_(*this); };
  single_ = std::make_unique<Node>(std::move(executor), std::move(options), std::move(hook),
                                   load_scripts);
  single_->leave_replicas();
}

Client::Client(asio::any_io_executor executor, const Target& target, ConnectionOptions options,
               OnConnect on_connect, bool load_scripts)
    : executor_(executor), on_connect_(std::move(on_connect)) {
  Node::OnConnect hook;
  if (on_connect_) hook = [this](Node&) { return on_connect_(*this); };
  if (!target.cluster) {
    options.address = target.servers.front();
    single_ = std::make_unique<Node>(std::move(executor), std::move(options), std::move(hook),
                                     load_scripts);
    single_->leave_replicas();
    return;
  }
  options.address = target.servers.front();  // the credentials every node shares
  Cluster::Hook on_ready;
  if (on_connect_) on_ready = [this] { return on_connect_(*this); };
  cluster_ = std::make_unique<Cluster>(std::move(executor), target.servers, std::move(options),
                                       std::move(on_ready), load_scripts);
}

Client::~Client() {
  stop();
}

void Client::start() {
  if (single_) single_->start();
  if (cluster_) cluster_->start();
}

void Client::stop() {
  if (single_) single_->stop();
  if (cluster_) cluster_->stop();
}

bool Client::ready() const {
  return single_ ? single_->ready() : cluster_->ready();
}

void Client::time_commands(metrics::Histogram* histogram) {
  if (single_) single_->time_commands(histogram);
  if (cluster_) cluster_->time_commands(histogram);
}

void Client::on_error(std::function<void(const std::error_code&)> hook) {
  on_error_ = hook;
  if (single_) single_->on_error(std::move(hook));
}

asio::awaitable<ReplyResult> Client::routed(std::vector<ClusterOp> ops, bool as_array) {
  if (ops.empty()) co_return empty_array();
  auto replies = co_await cluster_->run(std::move(ops));
  if (!replies) {
    if (on_error_) on_error_(replies.error());
    co_return unexpected(replies.error());
  }
  if (!as_array) co_return std::move(replies->front());
  Reply array = empty_array();
  array.elements = std::move(*replies);
  co_return array;
}

// The four calls are plain functions, not coroutines: a single Redis's call is its node's
// coroutine itself, with no frame of the client's in between (the single-Redis path costs what
// it did before clusters).
asio::awaitable<ReplyResult> Client::command(std::vector<std::string> args, Phase phase) {
  if (single_) return single_->command(std::move(args), phase);
  std::vector<ClusterOp> ops;
  ops.push_back(ClusterOp{command_slot(args), std::move(args)});
  return routed(std::move(ops), false);
}

asio::awaitable<ReplyResult> Client::pipeline(std::vector<std::vector<std::string>> commands,
                                              Phase phase) {
  if (single_) return single_->pipeline(std::move(commands), phase);
  std::vector<ClusterOp> ops;
  ops.reserve(commands.size());
  for (auto& args : commands) ops.push_back(ClusterOp{command_slot(args), std::move(args)});
  return routed(std::move(ops), true);
}

asio::awaitable<ReplyResult> Client::eval(ScriptCall call, Phase phase) {
  if (single_) return single_->eval(std::move(call), phase);
  auto slot = script_slot(call);
  if (!slot) return failed(slot.error());
  std::vector<ClusterOp> ops;
  ops.push_back(ClusterOp{*slot, std::move(call)});
  return routed(std::move(ops), false);
}

asio::awaitable<ReplyResult> Client::eval_pipeline(std::vector<ScriptCall> calls,
                                                   std::vector<std::vector<std::string>> extra,
                                                   Phase phase) {
  if (single_) return single_->eval_pipeline(std::move(calls), std::move(extra), phase);
  std::vector<ClusterOp> ops;
  ops.reserve(calls.size() + extra.size());
  for (ScriptCall& call : calls) {
    auto slot = script_slot(call);
    if (!slot) return failed(slot.error());
    ops.push_back(ClusterOp{*slot, std::move(call)});
  }
  for (auto& args : extra) ops.push_back(ClusterOp{command_slot(args), std::move(args)});
  return routed(std::move(ops), true);
}

namespace {

// One Redis's pipeline answered as one reply per command: all of them or the same error for all.
std::vector<ReplyResult> split(ReplyResult all, std::size_t n) {
  std::vector<ReplyResult> out;
  out.reserve(n);
  if (!all) {
    out.assign(n, ReplyResult(unexpected(all.error())));
  } else if (!all->is_array() || all->elements.size() != n) {
    out.assign(n, ReplyResult(unexpected(make_error_code(Errc::protocol_error))));
  } else {
    for (Reply& r : all->elements) out.emplace_back(std::move(r));
  }
  return out;
}

}  // namespace

asio::awaitable<std::vector<ReplyResult>> Client::eval_each(std::vector<ScriptCall> calls) {
  const std::size_t n = calls.size();
  if (single_) co_return split(co_await single_->eval_pipeline(std::move(calls)), n);
  std::vector<ClusterOp> ops;
  ops.reserve(n);
  std::vector<std::optional<std::error_code>> refused(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto slot = script_slot(calls[i]);
    if (!slot) {
      refused[i] = slot.error();
      continue;
    }
    ops.push_back(ClusterOp{*slot, std::move(calls[i])});
  }
  co_return co_await routed_each(std::move(ops), std::move(refused));
}

asio::awaitable<std::vector<ReplyResult>> Client::pipeline_each(
    std::vector<std::vector<std::string>> commands) {
  const std::size_t n = commands.size();
  if (single_) co_return split(co_await single_->pipeline(std::move(commands)), n);
  std::vector<ClusterOp> ops;
  ops.reserve(n);
  for (auto& args : commands) ops.push_back(ClusterOp{command_slot(args), std::move(args)});
  co_return co_await routed_each(std::move(ops), std::vector<std::optional<std::error_code>>(n));
}

// `refused`: one per op asked for, the error of those refused before sending (the others
// were given in `ops`, in order).
asio::awaitable<std::vector<ReplyResult>> Client::routed_each(
    std::vector<ClusterOp> ops, std::vector<std::optional<std::error_code>> refused) {
  std::vector<ReplyResult> sent = co_await cluster_->run_each(std::move(ops));
  std::vector<ReplyResult> out;
  out.reserve(refused.size());
  std::size_t next = 0;
  bool told = false;  // one error counted per call, as for routed()
  for (const auto& error : refused) {
    out.push_back(error ? ReplyResult(unexpected(*error)) : std::move(sent[next++]));
    if (!out.back() && on_error_ && !std::exchange(told, true)) on_error_(out.back().error());
  }
  co_return out;
}

namespace {

std::vector<std::string> wait_command(int replicas, std::chrono::milliseconds timeout) {
  return {"WAIT", std::to_string(replicas), std::to_string(timeout.count())};
}

}  // namespace

// `replies`: the scripts' replies, then WAIT's count: the scripts' replies when at least
// `replicas` confirmed, or not_replicated (a script that failed is its caller's to read).
ReplyResult Client::confirmed(ReplyResult replies, std::size_t scripts, int replicas) {
  if (!replies) return replies;
  if (!replies->is_array() || replies->elements.size() != scripts + 1) {
    return unexpected(make_error_code(Errc::protocol_error));
  }
  const Reply& acked = replies->elements.back();
  const bool wrote = std::none_of(replies->elements.begin(), replies->elements.end() - 1,
                                  [](const Reply& r) { return r.is_error(); });
  if (wrote && (!acked.is_integer() || acked.integer < replicas)) {
    const std::error_code ec = make_error_code(Errc::not_replicated);
    if (on_error_) on_error_(ec);
    return unexpected(ec);
  }
  replies->elements.pop_back();
  return replies;
}

asio::awaitable<ReplyResult> Client::eval_replicated(ScriptCall call, int replicas,
                                                     std::chrono::milliseconds timeout) {
  if (replicas <= 0) co_return co_await eval(std::move(call));
  ReplyResult both;
  if (single_) {
    // FCALL and WAIT in one write (both again after the library when Redis lost it).
    std::vector<std::vector<std::string>> extra;
    extra.push_back(wait_command(replicas, timeout));
    both = co_await single_->eval_with(std::move(call), std::move(extra));
  } else {
    auto slot = script_slot(call);
    if (!slot) co_return unexpected(slot.error());
    std::vector<ClusterOp> ops;
    ops.push_back(ClusterOp{*slot, std::move(call)});
    ops.push_back(ClusterOp{-1, wait_command(replicas, timeout), /*with_previous=*/true});
    both = co_await routed(std::move(ops), true);
  }
  auto script = confirmed(std::move(both), 1, replicas);
  if (!script) co_return script;
  co_return std::move(script->elements[0]);
}

asio::awaitable<ReplyResult> Client::eval_atomic(std::vector<ScriptCall> calls, int replicas,
                                                 std::chrono::milliseconds timeout) {
  if (!single_) co_return unexpected(make_error_code(Errc::cross_slot));
  std::vector<std::vector<std::string>> extra;
  if (replicas > 0) extra.push_back(wait_command(replicas, timeout));
  const std::size_t scripts = calls.size();
  auto reply = co_await single_->eval_atomic(std::move(calls), std::move(extra));
  if (replicas <= 0 || !reply || !reply->is_array()) co_return reply;
  co_return confirmed(std::move(reply), scripts, replicas);
}

asio::awaitable<std::vector<Client::NodeReplies>> Client::on_every_master(
    std::vector<std::vector<std::string>> commands, Phase phase) {
  std::vector<NodeReplies> out;
  if (single_) {
    std::string frame;
    for (const auto& args : commands) append_command(frame, args);
    const std::size_t count = commands.size();
    ReplyResult replies = co_await single_->exec(std::move(frame), count, phase);
    out.push_back(NodeReplies{single_->address().describe(), std::move(replies)});
    co_return out;
  }
  co_return co_await cluster_->on_every_master(std::move(commands));
}

}  // namespace jq::redis
