#include "src/redis/cluster.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "src/redis/errc.hpp"
#include "src/redis/script_sources.hpp"
#include "src/redis/slot.hpp"

namespace jq::redis {
namespace {

using std::chrono::milliseconds;

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) ==
                  std::toupper(static_cast<unsigned char>(y));
         });
}

// Commands the engine sends that name no key (or whose first argument is not a key).
constexpr std::array<std::string_view, 14> kKeyless = {
    "PING", "INFO",   "SCRIPT", "SCAN",   "WAIT",   "CLUSTER", "TIME",
    "AUTH", "SELECT", "ASKING", "CONFIG", "CLIENT", "DBSIZE",  "ECHO"};

// A failure of a whole node's batch after which nothing of it ran: sent again after a refresh.
bool not_run(const std::error_code& ec) {
  if (ec.category() != redis_category()) return false;
  switch (static_cast<Errc>(ec.value())) {
    case Errc::not_connected:  // refused before sending
    case Errc::loading:
    case Errc::read_only:  // a master that became a replica: its slots moved
    case Errc::master_down:
      return true;
    default:
      return false;
  }
}

milliseconds backoff(const ClusterOptions& o, int attempt) {
  milliseconds wait = o.backoff_min;
  for (int i = 0; i < attempt && wait < o.backoff_max; ++i) wait *= 2;
  return std::min(wait, o.backoff_max);
}

// Runs every task at once and answers their results in order.
asio::awaitable<std::vector<ReplyResult>> when_all(
    asio::any_io_executor executor, std::vector<asio::awaitable<ReplyResult>> tasks) {
  co_return co_await asio::async_initiate<const asio::use_awaitable_t<>&,
                                          void(std::vector<ReplyResult>)>(
      [executor, &tasks](auto handler) {
        using Handler = decltype(handler);
        struct State {
          State(std::size_t n, Handler h)
              : results(n, ReplyResult(unexpected(make_error_code(Errc::protocol_error)))),
                left(n),
                handler(std::move(h)) {}
          std::vector<ReplyResult> results;
          std::atomic<std::size_t> left;
          Handler handler;
        };
        auto state = std::make_shared<State>(tasks.size(), std::move(handler));
        for (std::size_t i = 0; i < tasks.size(); ++i) {
          asio::co_spawn(
              executor, std::move(tasks[i]), [state, i](std::exception_ptr e, ReplyResult r) {
                if (!e) state->results[i] = std::move(r);
                if (state->left.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
                auto ex = asio::get_associated_executor(state->handler);
                asio::post(ex, [state]() mutable { state->handler(std::move(state->results)); });
              });
        }
      },
      asio::use_awaitable);
}

}  // namespace

int command_slot(const std::vector<std::string>& args) {
  if (args.size() < 2) return -1;
  // SCAN of one shard's keys (MATCH <p>:{7}:...): the node of that shard.
  if (equal_ignoring_case(args[0], "SCAN")) {
    for (std::size_t i = 2; i + 1 < args.size(); ++i) {
      if (equal_ignoring_case(args[i], "MATCH") && hash_tag(args[i + 1]) != args[i + 1]) {
        return key_slot(args[i + 1]);
      }
    }
    return -1;
  }
  for (std::string_view keyless : kKeyless) {
    if (equal_ignoring_case(args[0], keyless)) return -1;
  }
  return key_slot(args[1]);
}

struct Cluster::Pending {
  ClusterOp op;
  std::optional<NodeAddress> ask;  // send once to this node, after ASKING
  bool reloaded = false;           // its node had lost the script library and was given it again
  std::optional<Reply> reply;      // done
  std::error_code error;           // given up on (Cluster::run_each only)
};

struct Cluster::Group {
  std::shared_ptr<Node> node;
  std::vector<std::size_t> ops;  // indices of the Pending ops it carries
  std::string frame;
  std::size_t replies = 0;
};

Cluster::Cluster(asio::any_io_executor executor, std::vector<Address> seeds, ConnectionOptions base,
                 Hook on_ready, bool load_scripts, ClusterOptions options)
    : executor_(executor),
      strand_(asio::make_strand(executor)),
      seeds_(std::move(seeds)),
      base_(std::move(base)),
      on_ready_(std::move(on_ready)),
      load_scripts_(load_scripts),
      options_(options),
      refresh_timer_(std::make_shared<asio::steady_timer>(strand_)) {}

Cluster::~Cluster() {
  stop();
}

void Cluster::start() {
  asio::co_spawn(strand_, refresh_loop(), asio::detached);
}

void Cluster::stop() {
  if (stopped_.exchange(true)) return;
  asio::post(strand_, [timer = refresh_timer_] { timer->cancel(); });
  std::lock_guard lock(nodes_mutex_);
  for (auto& [name, node] : nodes_) node->stop();
}

bool Cluster::ready() const {
  if (!ready_.load(std::memory_order_acquire)) return false;
  auto table = table_.load();
  return table && any_master(*table) != nullptr && any_master(*table)->ready();
}

std::shared_ptr<Node> Cluster::node_at(const NodeAddress& address) {
  std::lock_guard lock(nodes_mutex_);
  auto& node = nodes_[address.str()];
  if (!node) {
    ConnectionOptions o = base_;
    o.address.is_unix = false;
    o.address.host = address.host;
    o.address.port = address.port;
    o.address.db = 0;
    node = std::make_shared<Node>(executor_, std::move(o), Node::OnConnect{}, load_scripts_);
    node->time_commands(command_duration_);
    if (!stopped_) node->start();
  }
  return node;
}

std::shared_ptr<Node> Cluster::any_master(const SlotTable& table) const {
  for (const auto& node : table.masters) {
    if (node->ready()) return node;
  }
  return table.masters.empty() ? nullptr : table.masters.front();
}

asio::awaitable<Cluster::Replies> Cluster::run(std::vector<ClusterOp> ops) {
  std::vector<Pending> pending = pending_of(std::move(ops));
  const std::error_code ec = co_await settle_all(pending, false);  // not in the if: g++ 12
  if (ec) co_return unexpected(ec);
  std::vector<Reply> out;
  out.reserve(pending.size());
  for (Pending& p : pending) out.push_back(std::move(*p.reply));
  co_return out;
}

asio::awaitable<std::vector<ReplyResult>> Cluster::run_each(std::vector<ClusterOp> ops) {
  std::vector<Pending> pending = pending_of(std::move(ops));
  const std::error_code ec = co_await settle_all(pending, true);
  std::vector<ReplyResult> out;
  out.reserve(pending.size());
  for (Pending& p : pending) {
    if (p.reply) {
      out.emplace_back(std::move(*p.reply));
    } else {
      out.emplace_back(unexpected(p.error ? p.error : ec));
    }
  }
  co_return out;
}

std::vector<Cluster::Pending> Cluster::pending_of(std::vector<ClusterOp> ops) {
  std::vector<Pending> pending;
  pending.reserve(ops.size());
  for (ClusterOp& op : ops) pending.push_back(Pending{std::move(op), {}, false, {}, {}});
  return pending;
}

// Sends the ops without a reply (or, `each`, an error) until each has one. Not `each`: the first
// error that is not a redirect or a refusal before running, or running out of attempts, ends the
// whole run (returned). `each`: that error is the op's, and the others go on.
asio::awaitable<std::error_code> Cluster::settle_all(std::vector<Pending>& pending, bool each) {
  std::error_code last = make_error_code(Errc::cluster_down);
  const auto executor = co_await asio::this_coro::executor;  // apart: g++ 12
  asio::steady_timer timer(executor);
  for (int attempt = 0;; ++attempt) {
    if (stopped_) co_return make_error_code(Errc::shutting_down);
    const auto table = table_.load();
    std::vector<Group> groups;
    bool back_off = false;
    std::shared_ptr<Node> previous;  // where the op before went this round (null: nowhere)
    for (std::size_t i = 0; i < pending.size(); ++i) {
      Pending& p = pending[i];
      if (p.reply || p.error) continue;
      if (p.op.with_previous && i > 0 && pending[i - 1].error) {
        p.error = pending[i - 1].error;  // they go together
        continue;
      }
      std::shared_ptr<Node> node;
      if (p.op.with_previous) {
        node = i > 0 && !pending[i - 1].reply && !pending[i - 1].error ? previous : nullptr;
        if (!node) continue;  // its op is not being sent: it waits for it
      } else if (p.ask) {
        node = node_at(*p.ask);
      } else if (table && p.op.slot < 0) {
        node = any_master(*table);
      } else if (table && table->owner[static_cast<std::size_t>(p.op.slot)] != SlotTable::kNoNode) {
        node = table->masters[table->owner[static_cast<std::size_t>(p.op.slot)]];
      }
      previous = node;
      if (!node) {  // no map yet, or the slot is not served: wait for a refresh
        want_refresh();
        back_off = true;
        continue;
      }
      auto g = std::find_if(groups.begin(), groups.end(),
                            [&](const Group& x) { return x.node == node; });
      if (g == groups.end()) g = groups.insert(groups.end(), Group{node, {}, {}, 0});
      if (p.ask) {
        const std::array<std::string_view, 1> asking = {"ASKING"};
        append_command(g->frame, asking);
        ++g->replies;
      }
      if (const auto* call = std::get_if<ScriptCall>(&p.op.what)) {
        append_script(g->frame, script(call->id), *call, node->scripts_by_source());
      } else {
        append_command(g->frame, std::get<std::vector<std::string>>(p.op.what));
      }
      ++g->replies;
      g->ops.push_back(i);
    }
    if (!groups.empty()) {
      std::vector<ReplyResult> results = co_await send_groups(groups);
      std::vector<std::shared_ptr<Node>> reload;
      for (std::size_t k = 0; k < groups.size(); ++k) {
        if (auto fatal =
                settle(groups[k], std::move(results[k]), pending, back_off, last, reload)) {
          if (!each) co_return *fatal;
          for (std::size_t i : groups[k].ops) {
            if (!pending[i].reply) pending[i].error = *fatal;
          }
        }
      }
      // Before the calls go again: a node that refuses the library for memory takes them by
      // their source instead (Node::reload_library).
      for (const auto& node : reload) co_await node->reload_library();
    }
    if (std::all_of(pending.begin(), pending.end(),
                    [](const Pending& p) { return p.reply || p.error; })) {
      co_return std::error_code();
    }
    if (attempt + 1 >= options_.max_attempts) {
      for (Pending& p : pending) {
        if (!p.reply && !p.error) p.error = last;
      }
      co_return each ? std::error_code() : last;
    }
    if (back_off) {
      timer.expires_after(backoff(options_, attempt));
      boost::system::error_code ignored;
      co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    }
  }
}

asio::awaitable<std::vector<ReplyResult>> Cluster::send_groups(std::vector<Group>& groups) {
  if (groups.size() == 1) {
    std::vector<ReplyResult> one;
    one.push_back(co_await groups[0].node->exec(std::move(groups[0].frame), groups[0].replies));
    co_return one;
  }
  std::vector<asio::awaitable<ReplyResult>> tasks;
  tasks.reserve(groups.size());
  for (Group& g : groups) tasks.push_back(g.node->exec(std::move(g.frame), g.replies));
  co_return co_await when_all(executor_, std::move(tasks));
}

std::optional<std::error_code> Cluster::settle(const Group& group, ReplyResult reply,
                                               std::vector<Pending>& ops, bool& back_off,
                                               std::error_code& last,
                                               std::vector<std::shared_ptr<Node>>& reload) {
  if (!reply) {
    if (!not_run(reply.error())) return reply.error();
    for (std::size_t i : group.ops) ops[i].ask.reset();
    want_refresh();
    back_off = true;
    last = reply.error();
    return std::nullopt;
  }
  if (!reply->is_array() || reply->elements.size() != group.replies) {
    return make_error_code(Errc::protocol_error);
  }
  std::size_t at = 0;
  for (std::size_t i : group.ops) {
    Pending& p = ops[i];
    if (p.ask) {
      ++at;  // ASKING's +OK
      p.ask.reset();
    }
    Reply& r = reply->elements[at++];
    if (p.op.with_previous && !ops[i - 1].reply) continue;  // goes again with it
    if (r.is_error()) {
      if (auto redirect = parse_redirect(r.str)) {
        if (redirect->to.host.empty()) redirect->to.host = group.node->address().host;
        if (redirect->kind == Redirect::Kind::moved) {
          moved(redirect->slot, redirect->to);
        } else {
          p.ask = redirect->to;
        }
        last = make_error_code(Errc::cluster_down);
        continue;
      }
      if (r.str.starts_with("TRYAGAIN") || r.str.starts_with("CLUSTERDOWN")) {
        // A migration that ends, or a failover, changes the map: read it again (throttled).
        want_refresh();
        back_off = true;
        last = make_error_code(Errc::cluster_down);
        continue;
      }
      if (lost_library(r) && std::holds_alternative<ScriptCall>(p.op.what) && !p.reloaded) {
        p.reloaded = true;
        if (std::find(reload.begin(), reload.end(), group.node) == reload.end()) {
          reload.push_back(group.node);
        }
        continue;
      }
    }
    p.reply = std::move(r);
  }
  return std::nullopt;
}

void Cluster::moved(int slot, const NodeAddress& to) {
  {
    std::lock_guard lock(table_mutex_);
    const auto current = table_.load();
    const std::shared_ptr<Node> node = node_at(to);
    const auto slot_at = static_cast<std::size_t>(slot);
    if (current && current->owner[slot_at] != SlotTable::kNoNode &&
        current->masters[current->owner[slot_at]] == node) {
      return;  // known already (answers sent before the change keep coming back MOVED)
    }
    auto next = current ? std::make_shared<SlotTable>(*current) : std::make_shared<SlotTable>();
    auto at = std::find(next->masters.begin(), next->masters.end(), node);
    if (at == next->masters.end()) at = next->masters.insert(next->masters.end(), node);
    next->owner[slot_at] = static_cast<std::uint16_t>(at - next->masters.begin());
    ++next->version;
    table_.store(std::move(next));
    if (on_change_) asio::post(strand_, on_change_);
  }
  want_refresh();
}

void Cluster::want_refresh() {
  if (refresh_wanted_.exchange(true)) return;
  asio::post(strand_, [timer = refresh_timer_] { timer->cancel(); });
}

// Reads the map until it is known, runs the ready hook, then reads it again whenever asked: at
// most once per refresh_every however often it is asked (every failing command asks).
asio::awaitable<void> Cluster::refresh_loop() {
  milliseconds retry = milliseconds(50);
  bool logged_down = false;
  asio::steady_timer pause(strand_);  // the throttle and the retry backoff; stop() ends it soon
  boost::system::error_code ignored;
  while (!stopped_) {
    refresh_wanted_ = false;
    const auto started = std::chrono::steady_clock::now();
    const bool known = co_await refresh();
    if (known && !ready_) {
      std::error_code ec;
      if (on_ready_) ec = co_await on_ready_();  // (no co_await in a ?:, g++ 12)
      if (!ec) {
        ready_ = true;
        spdlog::info("connected to Redis Cluster ({} masters)", table_.load()->masters.size());
      } else if (!logged_down) {
        spdlog::warn("Redis Cluster not ready ({}); retrying", ec.message());
        logged_down = true;
      }
    }
    if (!known || !ready_) {
      if (!known && !logged_down) {
        spdlog::warn("no node of the Redis Cluster answers CLUSTER SLOTS; retrying");
        logged_down = true;
      }
      pause.expires_after(retry);
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
      retry = std::min(retry * 2, milliseconds(2'000));
      continue;
    }
    logged_down = false;
    retry = milliseconds(50);
    if (!refresh_wanted_) {  // want_refresh() cancels this wait
      refresh_timer_->expires_at(asio::steady_timer::time_point::max());
      co_await refresh_timer_->async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    }
    pause.expires_at(started + options_.refresh_every);
    co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
}

// CLUSTER SLOTS from the first connected node that answers it: the known masters, then the
// seeds.
asio::awaitable<bool> Cluster::refresh() {
  std::vector<NodeAddress> candidates;
  if (auto table = table_.load()) {
    for (const auto& node : table->masters) {
      candidates.push_back(NodeAddress{node->address().host, node->address().port});
    }
  }
  for (const Address& seed : seeds_) candidates.push_back(NodeAddress{seed.host, seed.port});
  for (const NodeAddress& candidate : candidates) {
    std::shared_ptr<Node> node = node_at(candidate);
    if (!node->ready()) continue;
    std::vector<std::string> ask{"CLUSTER", "SLOTS"};
    auto reply = co_await node->command(std::move(ask));
    if (!reply || reply->is_error()) continue;
    auto layout = parse_cluster_slots(*reply, candidate.host);
    if (!layout || layout->ranges.empty()) continue;
    auto table = std::make_shared<SlotTable>();
    for (const NodeAddress& master : layout->masters) table->masters.push_back(node_at(master));
    for (const SlotRange& range : layout->ranges) {
      std::fill(table->owner.begin() + range.first, table->owner.begin() + range.last + 1,
                static_cast<std::uint16_t>(range.master));
    }
    install(std::move(table));
    co_return true;
  }
  co_return false;
}

// Replaces the map when it differs; runs the ready hook again when the masters changed.
void Cluster::install(std::shared_ptr<SlotTable> table) {
  bool masters_changed = false;
  {
    std::lock_guard lock(table_mutex_);
    auto current = table_.load();
    if (current && current->owner == table->owner && current->masters == table->masters) return;
    masters_changed = current && current->masters != table->masters;
    table->version = current ? current->version + 1 : 1;
    table_.store(table);
  }
  if (masters_changed) {
    std::string names;
    for (const auto& node : table->masters) names += " " + node->address().describe();
    spdlog::info("Redis Cluster masters now:{}", names);
  }
  if (on_change_) on_change_();
  if (masters_changed && ready_ && on_ready_) {
    asio::co_spawn(
        strand_,
        [this]() -> asio::awaitable<void> {
          if (auto ec = co_await on_ready_()) {
            spdlog::warn("after a change of Redis Cluster masters: {}", ec.message());
          }
        },
        asio::detached);
  }
}

asio::awaitable<std::vector<Cluster::NodeReplies>> Cluster::on_every_master(
    std::vector<std::vector<std::string>> commands) {
  std::vector<NodeReplies> out;
  const auto table = table_.load();
  if (!table || table->masters.empty()) {
    out.push_back(NodeReplies{"Redis Cluster", unexpected(make_error_code(Errc::not_connected))});
    co_return out;
  }
  std::string frame;
  for (const auto& args : commands) append_command(frame, args);
  std::vector<asio::awaitable<ReplyResult>> tasks;
  for (const auto& node : table->masters) {
    out.push_back(NodeReplies{node->address().describe(), {}});
    tasks.push_back(node->exec(frame, commands.size()));
  }
  std::vector<ReplyResult> results = co_await when_all(executor_, std::move(tasks));
  for (std::size_t i = 0; i < out.size(); ++i) out[i].replies = std::move(results[i]);
  co_return out;
}

}  // namespace jq::redis
