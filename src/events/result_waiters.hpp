// Long polls for results: a request waiting on a job id parks on a timer; the "r <id>" event
// (from whichever master stored the result) cancels it, so the answer goes out at once.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

namespace jq::events {

class ResultWaiters {
 public:
  class Ticket;

  // Registers interest before the caller checks the store, so no event can slip between the
  // check and the wait.
  std::shared_ptr<Ticket> watch(const std::string& id, boost::asio::any_io_executor executor);
  // Waits until notified or `timeout` passes; true when notified.
  static boost::asio::awaitable<bool> wait(std::shared_ptr<Ticket> ticket,
                                           std::chrono::milliseconds timeout);
  void notify(const std::string& id);
  // Wakes every waiter: after a resubscription, when a result's event may have been missed
  // (each waiter looks at its job again and waits on if it is still pending).
  void notify_all();
  void forget(const std::shared_ptr<Ticket>& ticket);

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::vector<std::shared_ptr<Ticket>>> by_id_;
};

class ResultWaiters::Ticket {
 public:
  Ticket(std::string id, boost::asio::any_io_executor executor)
      : id(std::move(id)), timer(std::move(executor)) {}
  const std::string id;
  boost::asio::steady_timer timer;
  bool notified = false;  // guarded by the owner's mutex until the wait ends
};

}  // namespace jq::events
