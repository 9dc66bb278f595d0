// Long polls for results: a request waiting on a job id parks on a timer; the "r <id>" event
// (from whichever master stored the result) cancels it, so the answer goes out at once. When the
// job's success is recorded by this master while one of its polls waits, the dispatcher claims
// the waiters first and hands the result over itself (no store, no event, no second fetch).
// While a job's attempt runs on this master, a poll of it need not ask Redis at all: its answer
// comes here, and a poll that started meanwhile is either claimed with the others or, when the
// attempt ends without a result, woken to look at the store.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
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
  // check and the wait. The ticket says whether an attempt of the job runs here (`here`).
  std::shared_ptr<Ticket> watch(const std::string& id, boost::asio::any_io_executor executor);
  // An attempt of job `id` (which keeps its result) runs on this master from now on.
  void running_here(const std::string& id);
  // One such attempt ended (its success claimed the waiters already, or it failed, was given
  // back, or never started): when none is left, the polls that waited on it and are not
  // claimed look at the store.
  void ended_here(const std::string& id);
  // Waits until notified or `timeout` passes; true when notified. A waiter claimed in the
  // meantime waits on for deliver(): its result may already be taken from the store for it.
  boost::asio::awaitable<bool> wait(std::shared_ptr<Ticket> ticket,
                                    std::chrono::milliseconds timeout);
  void notify(const std::string& id);
  // Takes every waiter of `id` out of reach of notify() and notify_all(): each now waits past its
  // timeout until deliver() wakes it, which the caller must see to. Empty when none waits.
  std::vector<std::shared_ptr<Ticket>> claim(const std::string& id);
  // Wakes claimed waiters: the first gets `result` (the result object, MessagePack) when there is
  // one; the others, and all of them without a result, look at the job again.
  static void deliver(const std::vector<std::shared_ptr<Ticket>>& tickets,
                      std::optional<std::string> result);
  // Wakes every waiter: after a resubscription, when a result's event may have been missed
  // (each waiter looks at its job again and waits on if it is still pending).
  void notify_all();
  // True when the ticket was still registered (nobody will wake it after this).
  bool forget(const std::shared_ptr<Ticket>& ticket);

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::vector<std::shared_ptr<Ticket>>> by_id_;
  // How many attempts of each job run on this master (rarely more than one).
  std::unordered_map<std::string, int> here_;
};

class ResultWaiters::Ticket {
 public:
  Ticket(std::string id, boost::asio::any_io_executor executor)
      : id(std::move(id)), timer(std::move(executor)) {}
  const std::string id;
  boost::asio::steady_timer timer;
  bool notified = false;              // guarded by the owner's mutex until the wait ends
  std::optional<std::string> result;  // handed over by deliver(); set with `notified`
  // An attempt of the job ran on this master when the ticket was made: the poll waits without
  // asking Redis (the attempt's end claims or wakes it). Not counted in the watch key, so a
  // result stored by another master (after a reap) reaches it only once that attempt ends.
  bool here = false;
  // The poll is counted in the job's watch key (fetchResult said so): a master handing the
  // result over tells completeJobs, which announces it only for polls beyond those it knows.
  std::atomic<bool> counted{false};
};

}  // namespace jq::events
