#include "src/events/result_waiters.hpp"

#include <algorithm>

#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace jq::events {

namespace asio = boost::asio;

std::shared_ptr<ResultWaiters::Ticket> ResultWaiters::watch(const std::string& id,
                                                            asio::any_io_executor executor) {
  auto ticket = std::make_shared<Ticket>(id, std::move(executor));
  ticket->timer.expires_at(asio::steady_timer::time_point::max());
  std::lock_guard lock(mutex_);
  by_id_[id].push_back(ticket);
  return ticket;
}

asio::awaitable<bool> ResultWaiters::wait(std::shared_ptr<Ticket> ticket,
                                          std::chrono::milliseconds timeout) {
  // notify() may already have run: then the timer was cancelled before this wait, and
  // `notified` tells (both happen on the ticket's executor, in order).
  if (ticket->notified) co_return true;
  ticket->timer.expires_after(timeout);
  boost::system::error_code ec;
  co_await ticket->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  co_return ticket->notified;
}

namespace {

void wake(const std::vector<std::shared_ptr<ResultWaiters::Ticket>>& tickets) {
  for (const auto& t : tickets) {
    asio::post(t->timer.get_executor(), [t] {
      t->notified = true;
      t->timer.cancel();
    });
  }
}

}  // namespace

void ResultWaiters::notify(const std::string& id) {
  std::vector<std::shared_ptr<Ticket>> tickets;
  {
    std::lock_guard lock(mutex_);
    auto it = by_id_.find(id);
    if (it == by_id_.end()) return;
    tickets = std::move(it->second);
    by_id_.erase(it);
  }
  wake(tickets);
}

void ResultWaiters::notify_all() {
  std::vector<std::shared_ptr<Ticket>> tickets;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, some] : by_id_) tickets.insert(tickets.end(), some.begin(), some.end());
    by_id_.clear();
  }
  wake(tickets);
}

void ResultWaiters::forget(const std::shared_ptr<Ticket>& ticket) {
  std::lock_guard lock(mutex_);
  auto it = by_id_.find(ticket->id);
  if (it == by_id_.end()) return;
  std::erase(it->second, ticket);
  if (it->second.empty()) by_id_.erase(it);
}

}  // namespace jq::events
