// The scheduler's side of pushes that skip the queue (store::DirectDispatch): a free slot it
// holds, granted to a job no queue it knows of should run before, then the job started on it.
#include "src/scheduler/scheduler.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace jq::scheduler {

asio::awaitable<std::vector<std::optional<store::SlotClaim>>> Scheduler::claim(
    std::vector<store::ClaimWanted> wanted) {
  co_return co_await asio::co_spawn(loop_.strand(), claim_here(std::move(wanted)),
                                    asio::use_awaitable);
}

// Nothing is granted while what this master knows may be behind: Redis lost, registrations or
// paused queues to reload (a pause answered by this master is among them at once).
asio::awaitable<std::vector<std::optional<store::SlotClaim>>> Scheduler::claim_here(
    std::vector<store::ClaimWanted> wanted) {
  std::vector<std::optional<store::SlotClaim>> out(wanted.size());
  if (stopping_ || redis_lost_ || !redis_.ready() || reload_workers_ || reload_names_) {
    co_return out;
  }
  std::vector<std::size_t> order(wanted.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&wanted](std::size_t a, std::size_t b) {
    return wanted[a].priority < wanted[b].priority;
  });
  const SteadyTime now = clock_();
  for (std::size_t i : order) out[i] = claim_one(wanted[i], now);
  update_claimable();
  co_return out;
}

// Whether a job pushed now could go straight to `state`'s endpoint: it is open, holds a free
// slot, and every queue it serves is known to be empty (the job would be the next one reserved
// for it). Asked after every claim, settle and pass: one lookup, whatever the number of names.
bool Scheduler::takes_claims(const EndpointState& state, SteadyTime now) {
  // Jobs reserved ahead run before one pushed now.
  return state.held > 0 && state.open(now) && state.ahead.empty() &&
         work_.count(*state.endpoint) == 0;
}

// The open endpoint serving the name with a free slot held and the fewest attempts, among those
// whose queues are all known to be empty: the job would be the next one reserved for it.
std::optional<store::SlotClaim> Scheduler::claim_one(const store::ClaimWanted& wanted,
                                                     SteadyTime now) {
  if (paused_.contains(wanted.name) || !names_.contains(wanted.name)) return std::nullopt;
  EndpointState* best = nullptr;
  for (auto& [id, state] : slots_.all()) {
    if (best && best->inflight <= state.inflight) continue;
    if (takes_claims(state, now) && state.serves(wanted.name)) best = &state;
  }
  if (!best) return std::nullopt;
  slots_.started(*best, 1);
  slots_.found_work(*best);
  claims_.emplace(++last_claim_, best->endpoint->id);
  return store::SlotClaim{last_claim_};
}

void Scheduler::settle(store::SlotClaim claim, std::optional<store::ReservedJob> job) {
  // Now, on the pusher's thread: the push is answered right after this returns.
  if (job) dispatcher_.will_run(*job);
  asio::post(loop_.strand(),
             [this, claim, job = std::move(job)]() mutable { settle_here(claim, std::move(job)); });
}

void Scheduler::settle_here(store::SlotClaim claim, std::optional<store::ReservedJob> job) {
  const auto it = claims_.find(claim.id);
  const std::string endpoint_id = it == claims_.end() ? std::string() : std::move(it->second);
  if (it != claims_.end()) claims_.erase(it);
  if (job) {
    // The claim counted the attempt: the endpoint stays known until it ends.
    if (EndpointState* state = endpoint_id.empty() ? nullptr : slots_.find(endpoint_id)) {
      dispatch(*state, std::move(*job));
    } else {
      spdlog::warn("job {}: its endpoint is gone; it runs again once its attempt times out",
                   job->id.str());
      dispatcher_.wont_run(*job);
    }
    return;
  }
  if (endpoint_id.empty()) return;
  if (slots_.unused(endpoint_id, 1, stopping_) > 0) {
    asio::co_spawn(loop_.strand(), workers_.release(endpoint_id, 1), asio::detached);
  }
  update_claimable();
  loop_.poke();
}

// What pushers read, off the strand, before asking for a slot (may_claim): some endpoint
// takes_claims, as claim_one asks. Kept up to date wherever slots or heads change on the strand
// (the end of each pass and step, a claim, a settle, an attempt's end): a stale yes costs the
// push a wasted hop to the strand, a stale no queues its job the usual way. Under a backlog it
// is no, and pushes skip the hop.
void Scheduler::update_claimable() {
  const SteadyTime now = clock_();
  bool any = false;
  for (const auto& [id, state] : slots_.all()) {
    if (takes_claims(state, now)) {
      any = true;
      break;
    }
  }
  claimable_.store(any && !stopping_, std::memory_order_relaxed);
}

}  // namespace jq::scheduler
