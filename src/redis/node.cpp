#include "src/redis/node.hpp"

#include <array>
#include <charconv>
#include <chrono>
#include <limits>

#include <spdlog/spdlog.h>
#include <boost/asio/use_awaitable.hpp>

#include "src/metrics/registry.hpp"
#include "src/redis/errc.hpp"
#include "src/redis/keys.hpp"
#include "src/redis/script_sources.hpp"

namespace jq::redis {

void append_script(std::string& frame, const Script& s, const ScriptCall& call, bool by_source) {
  const std::string_view what = by_source ? std::string_view(eval_source(s)) : s.function;
  std::size_t size = 64 + what.size();
  for (const std::string& k : call.keys) size += k.size() + 16;
  for (const std::string& a : call.args) size += a.size() + 16;
  frame.reserve(frame.size() + size);
  char num_keys[16];
  const char* num_keys_end =
      std::to_chars(num_keys, num_keys + sizeof num_keys, call.keys.size()).ptr;
  append_array_header(frame, 3 + call.keys.size() + call.args.size());
  append_bulk(frame, by_source ? "EVAL" : "FCALL");
  append_bulk(frame, what);
  append_bulk(frame, std::string_view(num_keys, static_cast<std::size_t>(num_keys_end - num_keys)));
  for (const std::string& k : call.keys) append_bulk(frame, k);
  for (const std::string& a : call.args) append_bulk(frame, a);
}

Reply empty_array() {
  Reply array;
  array.type = Reply::Type::array;
  return array;
}

namespace {

bool lost_script(const ReplyResult& reply) {
  return reply && lost_library(*reply);
}

// A refusal as an error code: the reply itself, or, for several commands, the first refused one.
std::optional<Errc> refused(const Reply& reply, std::size_t replies) {
  if (reply.is_error()) return refusal_of(reply.str);
  if (replies == 1 || !reply.is_array()) return std::nullopt;
  for (const Reply& r : reply.elements) {
    if (!r.is_error()) continue;
    if (auto errc = refusal_of(r.str)) return errc;
  }
  return std::nullopt;
}

// How often a connection whose scripts go by source tries to load the library again.
constexpr std::int64_t kLibraryRetryMs = 2000;

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Node::Node(asio::any_io_executor executor, ConnectionOptions options, OnConnect on_connect,
           bool load_scripts)
    : options_(options), on_connect_(std::move(on_connect)), load_scripts_(load_scripts) {
  connection_ = Connection::create(std::move(executor), std::move(options),
                                   [this](Connection&) { return handshake(); });
}

Node::~Node() {
  stop();
}

void Node::start() {
  connection_->start();
}
void Node::stop() {
  connection_->stop();
}
bool Node::ready() const {
  return connection_->ready();
}

asio::awaitable<ReplyResult> Node::send(std::string frame, std::size_t replies, Phase phase) {
  const auto started = std::chrono::steady_clock::now();
  ReplyResult reply = co_await raw(std::move(frame), replies, phase);
  if (command_duration_ != nullptr) {
    command_duration_->observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  if (reply) {
    if (auto errc = refused(*reply, replies)) {
      reply = unexpected(make_error_code(*errc));
      if (leave_replicas_ && (*errc == Errc::read_only || *errc == Errc::master_down)) {
        connection_->reconnect_later(reply.error());
      }
    }
  }
  if (!reply && on_error_) on_error_(reply.error());
  co_return reply;
}

asio::awaitable<ReplyResult> Node::raw(std::string frame, std::size_t replies, Phase phase) {
  if (phase == Phase::handshake) {
    co_return co_await connection_->async_exec_handshake(std::move(frame), replies,
                                                         asio::use_awaitable);
  }
  co_return co_await connection_->async_exec(std::move(frame), replies, asio::use_awaitable);
}

asio::awaitable<ReplyResult> Node::command(std::vector<std::string> args, Phase phase) {
  std::string frame;
  append_command(frame, args);
  co_return co_await send(std::move(frame), 1, phase);
}

asio::awaitable<ReplyResult> Node::exec(std::string frame, std::size_t replies, Phase phase) {
  if (phase == Phase::ready && library_retry_due()) co_await retry_library_load();
  auto reply = co_await send(std::move(frame), replies, phase);
  // The connection hands back a lone command's reply as it is; a pipeline answers an array
  // whatever its length (a one-name stats or heads query would otherwise misread the reply).
  if (!reply || replies != 1) co_return reply;
  Reply array = empty_array();
  array.elements.push_back(std::move(*reply));
  co_return array;
}

asio::awaitable<ReplyResult> Node::pipeline(std::vector<std::vector<std::string>> commands,
                                            Phase phase) {
  if (commands.empty()) co_return empty_array();
  std::string frame;
  for (const auto& args : commands) append_command(frame, args);
  co_return co_await exec(std::move(frame), commands.size(), phase);
}

asio::awaitable<ReplyResult> Node::eval(ScriptCall call, Phase phase) {
  auto reply = co_await eval_with(std::move(call), {}, phase);
  if (!reply) co_return reply;
  co_return std::move(reply->elements[0]);
}

asio::awaitable<ReplyResult> Node::eval_with(ScriptCall call,
                                             std::vector<std::vector<std::string>> extra,
                                             Phase phase) {
  const Script& s = script(call.id);
  const auto frame = [&] {
    std::string out;
    append_script(out, s, call, scripts_by_source_);
    for (const auto& args : extra) append_command(out, args);
    return out;
  };
  const std::size_t count = 1 + extra.size();
  auto reply = co_await exec(frame(), count, phase);
  if (!reply || !reply->is_array() || reply->elements.empty() ||
      !lost_library(reply->elements[0])) {
    co_return reply;
  }
  // Nothing of the frame ran: the call and the rest go again (the commands may be about the
  // call, as a WAIT for its writes), by FCALL or, if Redis refused the library for memory, by
  // the script's source.
  co_await reload_library(phase);
  co_return co_await exec(frame(), count, phase);
}

asio::awaitable<ReplyResult> Node::eval_pipeline(std::vector<ScriptCall> calls,
                                                 std::vector<std::vector<std::string>> extra,
                                                 Phase phase) {
  const std::size_t count = calls.size() + extra.size();
  if (count == 0) co_return empty_array();
  std::string frame;
  for (const ScriptCall& call : calls)
    append_script(frame, script(call.id), call, scripts_by_source_);
  for (const auto& args : extra) append_command(frame, args);
  auto reply = co_await exec(std::move(frame), count, phase);
  if (!reply || !reply->is_array() || reply->elements.size() != count) co_return reply;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    ReplyResult one(std::move(reply->elements[i]));
    if (lost_script(one)) one = co_await eval(std::move(calls[i]), phase);
    if (!one) co_return one;
    reply->elements[i] = std::move(*one);
  }
  co_return reply;
}

asio::awaitable<ReplyResult> Node::eval_atomic(std::vector<ScriptCall> calls,
                                               std::vector<std::vector<std::string>> extra,
                                               Phase phase) {
  static constexpr std::array<std::string_view, 1> kMulti = {"MULTI"};
  static constexpr std::array<std::string_view, 1> kExec = {"EXEC"};
  const auto frame = [&] {
    std::string out;
    append_command(out, kMulti);
    for (const ScriptCall& call : calls)
      append_script(out, script(call.id), call, scripts_by_source_);
    append_command(out, kExec);
    for (const auto& args : extra) append_command(out, args);
    return out;
  };
  // MULTI's +OK, a +QUEUED per script, EXEC's array, then the commands'.
  const std::size_t count = calls.size() + 2 + extra.size();
  const std::size_t exec_at = calls.size() + 1;
  const auto results_of = [&](ReplyResult& reply) -> Reply* {
    if (!reply || !reply->is_array() || reply->elements.size() != count) return nullptr;
    return &reply->elements[exec_at];
  };
  auto reply = co_await exec(frame(), count, phase);
  if (Reply* results = results_of(reply); results != nullptr && results->is_array() &&
                                          !results->elements.empty() &&
                                          lost_library(results->elements[0])) {
    // Every script is a function of the one library: none of them ran.
    co_await reload_library(phase);
    reply = co_await exec(frame(), count, phase);
  }
  if (!reply) co_return reply;
  Reply* results = results_of(reply);
  if (results == nullptr) co_return unexpected(make_error_code(Errc::protocol_error));
  if (reply->elements[0].is_error()) {
    // MULTI itself refused (an ACL without it): each script ran on its own, answered in the
    // place of its +QUEUED, and EXEC found no transaction. What they did is what they answered.
    spdlog::warn(
        "Redis at {} refused MULTI ({}): a batch for several shards was stored one "
        "shard at a time; grant jqmaster's Redis user MULTI and EXEC",
        options_.address.describe(), reply->elements[0].str);
    Reply out = empty_array();
    for (std::size_t i = 1; i < count; ++i) {
      if (i != exec_at) out.elements.push_back(std::move(reply->elements[i]));
    }
    co_return out;
  }
  // An EXECABORT that is no refusal (those came back as their Errc) is the caller's to read.
  if (!results->is_array()) co_return std::move(*results);
  Reply out = std::move(*results);
  for (std::size_t i = exec_at + 1; i < count; ++i) {
    out.elements.push_back(std::move(reply->elements[i]));
  }
  co_return out;
}

// FUNCTION LOAD of the library alone (about 190 KB, written into the frame without a copy).
asio::awaitable<ReplyResult> Node::load_library(Phase phase) {
  const std::array<std::string_view, 3> load = {"FUNCTION", "LOAD", library_source()};
  std::string frame;
  append_command(frame, load);
  co_return co_await send(std::move(frame), 1, phase);
}

void Node::scripts_by_source_from_now() {
  spdlog::warn(
      "Redis at {} is over maxmemory and refused to load the script library {}: scripts go by "
      "their source until Redis has room for it",
      options_.address.describe(), library_name());
  next_library_retry_ms_ = steady_ms() + kLibraryRetryMs;
  scripts_by_source_ = true;
}

bool Node::library_retry_due() {
  if (!scripts_by_source_) return false;
  const std::int64_t now = steady_ms();
  std::int64_t due = next_library_retry_ms_;
  return now >= due && next_library_retry_ms_.compare_exchange_strong(due, now + kLibraryRetryMs);
}

// A Redis that refused the library for memory may have room again (results fetched, dead jobs
// deleted, maxmemory raised): every script by its source carries the whole library's helpers, so
// the sooner calls go by FCALL again, the better. Refused again costs one refused command; a
// refusal that time will not lift (the library does not compile, or an ACL no longer grants
// FUNCTION LOAD) stops the retries on this connection, said once.
asio::awaitable<void> Node::retry_library_load() {
  auto loaded = co_await load_library(Phase::ready);
  if (!loaded) co_return;  // over maxmemory still, or Redis busy or gone: tried again later
  if (library_loaded(*loaded)) {
    scripts_by_source_ = false;
    spdlog::info("Redis took the script library {}: scripts go by FCALL again", library_name());
    co_return;
  }
  next_library_retry_ms_ = std::numeric_limits<std::int64_t>::max();
  spdlog::error(
      "Redis refused the script library {}: {}; scripts keep going by their source on this "
      "connection (grant jqmaster's Redis user FUNCTION LOAD, or report the error)",
      library_name(), loaded->str);
}

asio::awaitable<void> Node::reload_library(Phase phase) {
  spdlog::info("Redis at {} lost the script library {}; loading it again",
               options_.address.describe(), library_name());
  auto loaded = co_await load_library(phase);
  if (!loaded && loaded.error() == make_error_code(Errc::out_of_memory)) {
    scripts_by_source_from_now();
  } else if (loaded && !library_loaded(*loaded)) {
    spdlog::error("Redis refused the script library {}: {}", library_name(), loaded->str);
  }
}

// AUTH and SELECT, then the script library is loaded unless Redis has it (a master of the same
// build loaded it): a script Redis cannot compile is a bug that must stop the start, not the
// first request that needs it. FUNCTION LOAD is refused while Redis is over maxmemory (where
// completions and reads must still run), so it is sent only when the library is missing, and
// when it is refused for memory this connection sends scripts by their source (EVAL) instead.
// With the library, a read-only script whose two keys have different hash tags asks whether the
// server lets one span them: a cluster node refuses it (CROSSSLOT), as do proxies that check a
// script's keys; an ACL that refuses it reads as no too (its keys are below jqmaster's prefix:
// an ACL that grants jqmaster its own keys allows it). A proxy that routes a script by its first
// key without looking at the others is not told apart from a single Redis.
asio::awaitable<std::error_code> Node::handshake() {
  std::vector<std::vector<std::string>> setup;
  const Address& a = options_.address;
  if (!a.password.empty()) {
    setup.push_back(a.username.empty() ? std::vector<std::string>{"AUTH", a.password}
                                       : std::vector<std::string>{"AUTH", a.username, a.password});
  }
  if (a.db != 0) setup.push_back({"SELECT", std::to_string(a.db)});
  if (load_scripts_) {
    setup.push_back({"FUNCTION", "LIST", "LIBRARYNAME", std::string(library_name())});
    const Keys keys;  // jqmaster's prefix, as the stores name their keys
    setup.push_back({"EVAL_RO", "return 1", "2", keys.span_probe_a(), keys.span_probe_b()});
  }
  if (setup.empty()) setup.push_back({"PING"});
  auto replies = co_await pipeline(std::move(setup), Phase::handshake);
  if (!replies) co_return replies.error();
  bool missing = false;
  scripts_by_source_ = false;
  if (load_scripts_ && replies->elements.size() >= 2) {
    // Any error (CROSSSLOT, NOPERM) reads as no.
    const Reply& probe = replies->elements.back();
    scripts_span_tags_ = probe.is_integer() && probe.integer == 1;
    replies->elements.pop_back();
    const Reply& listed = replies->elements.back();
    missing = listed.is_array() && listed.elements.empty();
  }
  for (const Reply& r : replies->elements) {
    if (!r.is_error()) continue;
    // Functions (FUNCTION LIST, FCALL) came with Redis 7.0; an ACL may leave them out.
    const char* hint = "";
    if (r.str.find("unknown command") != std::string::npos) {
      hint = " (jqmaster needs Redis 7.0 or newer)";
    } else if (r.str.starts_with("NOPERM") && r.str.find("function") != std::string::npos) {
      hint = " (give jqmaster's Redis user FUNCTION LIST, FUNCTION LOAD and FCALL)";
    }
    spdlog::error("Redis refused the connection set-up: {}{}", r.str, hint);
    co_return make_error_code(Errc::setup_refused);
  }
  if (missing) {
    auto loaded = co_await load_library(Phase::handshake);
    // A cluster's replica (a seed, say, after a failover) refuses it: its master loads the
    // library when the slot map leads there, and the replica gets it by replication. Refused,
    // every seed of a new build would stay unconnected, and the map never read.
    const bool replica =
        !loaded && !leave_replicas_ && loaded.error() == make_error_code(Errc::read_only);
    if (!loaded && !replica && loaded.error() != make_error_code(Errc::out_of_memory)) {
      co_return loaded.error();
    }
    if (replica) {
      // Nothing runs here: a script sent to it is MOVED to its master.
    } else if (!loaded) {
      scripts_by_source_from_now();
    } else if (!library_loaded(*loaded)) {
      spdlog::error("Redis refused the script library {}: {}", library_name(), loaded->str);
      co_return make_error_code(Errc::setup_refused);
    }
  }
  if (on_connect_) co_return co_await on_connect_(*this);
  co_return std::error_code{};
}

}  // namespace jq::redis
