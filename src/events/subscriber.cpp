#include "src/events/subscriber.hpp"

#include <algorithm>
#include <set>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

#include "src/redis/cluster.hpp"
#include "src/redis/node.hpp"
#include "src/redis/slot.hpp"

namespace jq::events {
namespace {

namespace asio = boost::asio;

// With the command timeout (10 s), a link that stopped answering is made again within 15 s.
constexpr std::chrono::seconds kPingEvery{5};

std::vector<std::vector<std::string>> subscriptions(const std::vector<std::string>& channels) {
  std::vector<std::vector<std::string>> commands;
  commands.reserve(channels.size());
  // One SSUBSCRIBE per channel: on a cluster one command's channels must share a slot.
  for (const std::string& c : channels) commands.push_back({"SSUBSCRIBE", c});
  return commands;
}

}  // namespace

struct Subscriber::Link {
  std::shared_ptr<redis::Node> node;
  std::mutex mutex;
  std::vector<std::string> channels;  // what it should hear; the handshake subscribes to these
  std::set<std::string> subscribed;   // what Redis confirmed on this link's connection

  std::vector<std::string> snapshot() {
    std::lock_guard lock(mutex);
    return channels;
  }
  // Wanted and not confirmed: a channel added while the link was connecting, or one whose
  // SSUBSCRIBE was refused.
  std::vector<std::string> missing() {
    std::lock_guard lock(mutex);
    std::vector<std::string> out;
    for (const std::string& c : channels) {
      if (!subscribed.contains(c)) out.push_back(c);
    }
    return out;
  }
  // Notes the channels of `sent` whose replies confirm them (an error reply leaves one missing,
  // and is logged); how many were confirmed.
  std::size_t confirmed(const std::vector<std::string>& sent, const redis::Reply& replies) {
    std::lock_guard lock(mutex);
    std::size_t added = 0;
    for (std::size_t i = 0; i < sent.size() && i < replies.elements.size(); ++i) {
      if (replies.elements[i].is_error()) {
        spdlog::warn("events channel {} at {} not subscribed: {}", sent[i],
                     node->address().describe(), replies.elements[i].str);
      } else if (subscribed.insert(sent[i]).second) {
        ++added;
      }
    }
    return added;
  }
  // The channels it should hear are `wanted` now: one no longer wanted is no longer taken for
  // heard (its slot may come back to this node, and must be subscribed again then).
  void want(std::vector<std::string> wanted) {
    std::lock_guard lock(mutex);
    channels = std::move(wanted);
    std::erase_if(subscribed, [this](const std::string& c) {
      return std::find(channels.begin(), channels.end(), c) == channels.end();
    });
  }
};

Subscriber::Subscriber(asio::any_io_executor executor, redis::Address address,
                       std::vector<std::string> channels, redis::Cluster* cluster)
    : executor_(executor),
      strand_(asio::make_strand(executor)),
      address_(std::move(address)),
      channels_(std::move(channels)),
      cluster_(cluster),
      keep_alive_(executor, "events keep-alive", [this]() -> asio::awaitable<Periodic::Duration> {
        asio::post(strand_, [this] { ping_links(); });
        co_return kPingEvery;
      }) {
  if (cluster_) {
    cluster_->on_table_change([this] { asio::post(strand_, [this] { follow_map(); }); });
  }
}

Subscriber::~Subscriber() = default;

void Subscriber::add_listener(Listener listener) {
  listeners_.push_back(std::move(listener));
}

void Subscriber::start() {
  asio::post(strand_, [this] { follow_map(); });
  keep_alive_.start();
}

void Subscriber::stop() {
  keep_alive_.stop();
  asio::post(strand_, [this] {
    stopped_ = true;
    for (auto& [name, link] : links_) link->node->stop();
  });
}

void Subscriber::local(const Event& event) const {
  for (const auto& listener : listeners_) listener(event);
}

void Subscriber::look_again() const {
  local(Event{EventKind::workers, {}});
  local(Event{EventKind::paused, {}});
  local(Event{EventKind::scheduled, "0"});
  local(Event{EventKind::pushed, {}});
  local(Event{EventKind::constraints, {}});
  local(Event{EventKind::schedules, {}});
  local(Event{EventKind::result, {}});  // every long poll looks at its job again
}

void Subscriber::on_push(const redis::Reply& message) {
  if (message.elements.size() != 3) return;
  if (message.elements[0].str == "sunsubscribe") {
    // The channel's slot left this node: the map changed, and the channel is no longer heard
    // here (a slot that comes back is subscribed again).
    asio::post(strand_, [this, channel = message.elements[1].str] {
      for (auto& [name, link] : links_) {
        std::lock_guard lock(link->mutex);
        link->subscribed.erase(channel);
      }
    });
    if (cluster_) cluster_->refresh_soon();
    return;
  }
  if (auto event = parse_event(message.elements[2].str)) local(*event);
}

std::shared_ptr<Subscriber::Link> Subscriber::link_to(const redis::Address& address) {
  auto& link = links_[address.describe()];
  if (link) return link;
  link = std::make_shared<Link>();
  redis::ConnectionOptions options{address};
  options.on_push = [this](redis::Reply message) { on_push(message); };
  std::weak_ptr<Link> weak = link;
  // A subscribed connection has no commands in flight but ping_links' PINGs, which let the
  // watchdog see it stop answering.
  link->node = std::make_shared<redis::Node>(
      executor_, std::move(options),
      [this, weak](redis::Node& node) -> asio::awaitable<std::error_code> {
        auto held = weak.lock();
        if (!held) co_return std::error_code{};
        {
          std::lock_guard lock(held->mutex);
          held->subscribed.clear();  // a new connection hears nothing yet
        }
        const std::vector<std::string> sent = held->snapshot();
        auto reply = co_await node.pipeline(subscriptions(sent), redis::Phase::handshake);
        if (!reply) co_return reply.error();
        held->confirmed(sent, *reply);
        // Events may have been missed while disconnected: tell listeners to look again.
        look_again();
        co_return std::error_code{};
      },
      /*load_scripts=*/false);
  if (!stopped_) link->node->start();
  return link;
}

void Subscriber::ping_links() {
  if (stopped_) return;
  for (auto& [name, link] : links_) {
    if (!link->node->ready()) continue;
    if (std::vector<std::string> missing = link->missing(); !missing.empty())
      subscribe(link, std::move(missing));
    // Its answer matters only to the watchdog, which resets a connection whose PING waits.
    std::vector<std::string> ping{std::string("PING")};
    asio::co_spawn(
        strand_,
        [node = link->node, ping = std::move(ping)]() mutable -> asio::awaitable<void> {
          co_await node->command(std::move(ping));
        },
        asio::detached);
  }
}

void Subscriber::follow_map() {
  if (stopped_) return;
  std::map<std::string, std::pair<redis::Address, std::vector<std::string>>> wanted;
  if (!cluster_) {
    wanted[address_.describe()] = {address_, channels_};
  } else {
    const auto table = cluster_->table();
    if (!table) return;  // called again once the map is known
    for (const std::string& channel : channels_) {
      const auto owner = table->owner[static_cast<std::size_t>(redis::key_slot(channel))];
      if (owner == redis::SlotTable::kNoNode) continue;
      redis::Address at = address_;
      at.host = table->masters[owner]->address().host;
      at.port = table->masters[owner]->address().port;
      auto& entry = wanted[at.describe()];
      entry.first = at;
      entry.second.push_back(channel);
    }
  }
  // Links no longer wanted hear nothing new; they stay (a node that comes back as a replica,
  // or a dead one reconnecting with backoff), so their connections can never be cut mid-use.
  for (auto& [name, link] : links_) {
    if (!wanted.contains(name)) link->want({});
  }
  for (auto& [name, want] : wanted) {
    auto link = link_to(want.first);
    link->want(want.second);
    // A (re)connect subscribes them all; a channel added while the link connects is found
    // missing by ping_links within its period.
    if (!link->node->ready()) continue;
    if (std::vector<std::string> missing = link->missing(); !missing.empty()) {
      subscribe(link, std::move(missing));
    }
  }
}

void Subscriber::subscribe(std::shared_ptr<Link> link, std::vector<std::string> channels) {
  asio::co_spawn(
      strand_,
      [this, link = std::move(link), channels = std::move(channels)]() -> asio::awaitable<void> {
        auto reply = co_await link->node->pipeline(subscriptions(channels));
        if (!reply) {
          spdlog::warn("could not subscribe to {} events channels at {}: {}", channels.size(),
                       link->node->address().describe(), reply.error().message());
          co_return;
        }
        // Events may have been missed on the channels heard from now: listeners look again.
        if (link->confirmed(channels, *reply) > 0) look_again();
      },
      asio::detached);
}

}  // namespace jq::events
