#include "src/events/subscriber.hpp"

#include <spdlog/spdlog.h>

#include "src/redis/client.hpp"

namespace jq::events {

Subscriber::Subscriber(boost::asio::any_io_executor executor, redis::Address address,
                       std::string channel)
    : channel_(std::move(channel)) {
  redis::ConnectionOptions options{std::move(address)};
  options.on_push = [this](redis::Reply message) {
    if (message.elements.size() != 3) return;
    if (auto event = parse_event(message.elements[2].str)) local(*event);
  };
  // A subscribed connection has no commands in flight, so the watchdog never fires on it.
  client_ = std::make_unique<redis::Client>(
      std::move(executor), std::move(options),
      [this](redis::Client& client) -> boost::asio::awaitable<std::error_code> {
        std::vector<std::string> subscribe{"SUBSCRIBE", channel_};
        auto reply = co_await client.command(std::move(subscribe), redis::Phase::handshake);
        if (!reply) co_return reply.error();
        // Events may have been missed while disconnected: tell listeners to look again.
        local(Event{EventKind::workers, {}});
        local(Event{EventKind::paused, {}});
        local(Event{EventKind::scheduled, "0"});
        local(Event{EventKind::pushed, {}});
        local(Event{EventKind::constraints, {}});
        local(Event{EventKind::schedules, {}});
        co_return std::error_code{};
      },
      /*load_scripts=*/false);
}

Subscriber::~Subscriber() = default;

void Subscriber::add_listener(Listener listener) {
  listeners_.push_back(std::move(listener));
}
void Subscriber::start() {
  client_->start();
}
void Subscriber::stop() {
  client_->stop();
}

void Subscriber::local(const Event& event) const {
  for (const auto& listener : listeners_) listener(event);
}

}  // namespace jq::events
