#include "src/events/result_waiters.hpp"

#include <algorithm>
#include <utility>

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
  ticket->here = here_.contains(id);
  by_id_[id].push_back(ticket);
  return ticket;
}

void ResultWaiters::running_here(const std::string& id) {
  std::lock_guard lock(mutex_);
  ++here_[id];
}

asio::awaitable<bool> ResultWaiters::wait(std::shared_ptr<Ticket> ticket,
                                          std::chrono::milliseconds timeout) {
  // notify() may already have run: then the timer was cancelled before this wait, and
  // `notified` tells (both happen on the ticket's executor, in order).
  if (ticket->notified) co_return true;
  ticket->timer.expires_after(timeout);
  boost::system::error_code ec;
  co_await ticket->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  if (ticket->notified || forget(ticket)) co_return ticket->notified;
  // Taken out by notify() or claim() just now: their wake-up is on its way (deliver() follows
  // the completeJobs call within its round trip).
  while (!ticket->notified) {
    ticket->timer.expires_after(std::chrono::seconds(1));
    co_await ticket->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  co_return true;
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

std::vector<std::shared_ptr<ResultWaiters::Ticket>> ResultWaiters::claim(const std::string& id) {
  std::vector<std::shared_ptr<Ticket>> tickets;
  std::lock_guard lock(mutex_);
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return tickets;
  tickets = std::move(it->second);
  by_id_.erase(it);
  return tickets;
}

void ResultWaiters::deliver(const std::vector<std::shared_ptr<Ticket>>& tickets,
                            std::optional<std::string> result) {
  for (const auto& t : tickets) {
    asio::post(t->timer.get_executor(), [t, r = std::exchange(result, std::nullopt)]() mutable {
      t->result = std::move(r);
      t->notified = true;
      t->timer.cancel();
    });
  }
}

void ResultWaiters::ended_here(const std::string& id) {
  std::vector<std::shared_ptr<Ticket>> tickets;
  {
    std::lock_guard lock(mutex_);
    auto at = here_.find(id);
    if (at == here_.end()) return;
    if (--at->second > 0) return;  // another attempt still runs here
    here_.erase(at);
    auto it = by_id_.find(id);
    if (it == by_id_.end()) return;
    // Those that waited on the attempt; the others have the store's watch key to wake them.
    std::vector<std::shared_ptr<Ticket>>& all = it->second;
    auto moved =
        std::stable_partition(all.begin(), all.end(), [](const auto& t) { return !t->here; });
    tickets.assign(moved, all.end());
    all.erase(moved, all.end());
    if (all.empty()) by_id_.erase(it);
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

bool ResultWaiters::forget(const std::shared_ptr<Ticket>& ticket) {
  std::lock_guard lock(mutex_);
  auto it = by_id_.find(ticket->id);
  if (it == by_id_.end()) return false;
  const bool found = std::erase(it->second, ticket) > 0;
  if (it->second.empty()) by_id_.erase(it);
  return found;
}

}  // namespace jq::events
