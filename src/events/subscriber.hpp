// Hears the events channels (sharded pub/sub: SSUBSCRIBE) on connections of its own (a subscribed
// connection can do nothing else) and hands each event to the listeners. On a single Redis one
// connection hears every channel. On a Redis Cluster each master gets a connection subscribed to
// the channels of the slots it serves (a message published with SPUBLISH stays on its shard),
// and the subscriptions follow the cluster's map: when a failover or resharding moves a slot, the
// new owner's connection subscribes to its channel (a node that loses a slot says so with
// "sunsubscribe", which asks the map to be read again).
//
// Listeners run on a subscriber connection's strand (on a cluster, on several at once) and must
// only post work elsewhere.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/strand.hpp>

#include "src/events/event.hpp"
#include "src/redis/address.hpp"
#include "src/util/periodic.hpp"

namespace jq::redis {
class Cluster;
class Node;
struct Reply;
}  // namespace jq::redis

namespace jq::events {

using Listener = std::function<void(const Event&)>;

class Subscriber {
 public:
  // A single Redis at `address` (`cluster` null), or every master of `cluster`'s map.
  Subscriber(boost::asio::any_io_executor executor, redis::Address address,
             std::vector<std::string> channels, redis::Cluster* cluster = nullptr);
  ~Subscriber();

  void add_listener(Listener listener);  // before start()
  void start();
  void stop();

 private:
  struct Link;  // one node's connection and the channels it hears

  // Hands an event to every listener: one parsed from a channel, or one the subscriber makes up
  // after a (re)subscription (anything may have changed while it did not listen).
  void local(const Event& event) const;
  void look_again() const;
  void on_push(const redis::Reply& message);
  // On the strand: each master's link hears the channels of its slots (cluster), or the one link
  // hears them all.
  void follow_map();
  std::shared_ptr<Link> link_to(const redis::Address& address);
  // On the strand: a PING on every ready link, and the channels it is missing subscribed. A
  // subscribed connection has nothing else in flight, so without it the connection's watchdog would
  // never see a Redis gone without a word (a host lost, a NAT or load balancer that dropped the
  // idle connection) and the master would stay deaf to events until restarted.
  void ping_links();
  // On the strand: SSUBSCRIBE `channels` on a ready link, noting those Redis confirms.
  void subscribe(std::shared_ptr<Link> link, std::vector<std::string> channels);

  boost::asio::any_io_executor executor_;
  boost::asio::strand<boost::asio::any_io_executor> strand_;
  redis::Address address_;  // single Redis: the server; cluster: the credentials
  std::vector<std::string> channels_;
  redis::Cluster* cluster_;
  std::vector<Listener> listeners_;
  std::map<std::string, std::shared_ptr<Link>> links_;  // by node address; on the strand
  bool stopped_ = false;
  Periodic keep_alive_;
};

}  // namespace jq::events
