// Hears the events channel on its own Redis connection (a subscribed connection can do nothing
// else) and hands each event to the listeners. Listeners run on the subscriber's strand and
// must only post work elsewhere.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "src/events/event.hpp"
#include "src/redis/address.hpp"

namespace jq::redis {
class Client;
}

namespace jq::events {

using Listener = std::function<void(const Event&)>;

class Subscriber {
 public:
  Subscriber(boost::asio::any_io_executor executor, redis::Address address, std::string channel);
  ~Subscriber();

  void add_listener(Listener listener);  // before start()
  void start();
  void stop();

 private:
  // Hands an event to every listener: one parsed from the channel, or one the subscriber makes
  // up after a reconnect (everything may have changed while it was away).
  void local(const Event& event) const;

  std::string channel_;
  std::vector<Listener> listeners_;
  std::unique_ptr<redis::Client> client_;
};

}  // namespace jq::events
