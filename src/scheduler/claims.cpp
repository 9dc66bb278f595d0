// The scheduler's side of pushes that skip the queue (store::DirectDispatch): a free slot it
// holds, granted to a job no queue it knows of should run before, then the job started on it;
// or, while every endpoint is busy, room ahead of one (dispatch.reserve_ahead), where the job
// waits as a job reserved ahead would have once it was queued, announced and reserved.
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
  if (stopping_ || redis_lost_ || !redis_.ready() || reload_workers_ || reload_names_ ||
      reloads_on_way_ > 0) {
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
  // Jobs reserved ahead run before one pushed now. Not those a claim of a concurrent push is taking
  // ahead (ahead_coming): refused, this push would queue its job and the announcement would stop
  // every claim until a reservation drained the queue. A client's next push is claimed after its
  // previous one settled (both go through the strand, in order), so it never overtakes its own.
  return state.held > 0 && state.open(now) && state.ahead.empty() &&
         work_.count(*state.endpoint) == 0;
}

// Whether a job pushed now could wait ahead of `state`'s busy endpoint: no endpoint at all could
// start a job now (`none_open`: one that could would take it, or a reservation for it, first),
// every queue it serves is known to be empty (the job would be the next one reserved ahead of
// it), and it has room ahead within dispatch.reserve_ahead. The job then waits behind the jobs
// already ahead, as one reserved would.
bool Scheduler::takes_claims_ahead(const EndpointState& state, SteadyTime now, bool none_open) {
  return none_open && !state.removed && now >= state.hold_until && now >= state.no_ahead_until &&
         work_.count(*state.endpoint) == 0 &&
         EndpointSlots::ahead_room_now(state, reserve_ahead_) > 0;
}

bool Scheduler::none_open(SteadyTime now) {
  for (const auto& [id, state] : slots_.all()) {
    if (state.open(now)) return false;
  }
  return true;
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
  if (best) {
    slots_.started(*best, 1);
    slots_.found_work(*best);
    claims_.emplace(++last_claim_, Claim{best->endpoint->id, false, {}});
    return store::SlotClaim{last_claim_};
  }
  // No free slot: room ahead of a busy endpoint, the one with the fewest jobs ahead.
  if (!none_open(now)) return std::nullopt;
  for (auto& [id, state] : slots_.all()) {
    if (best && best->waiting_ahead() <= state.waiting_ahead()) continue;
    if (takes_claims_ahead(state, now, true) && state.serves(wanted.name)) best = &state;
  }
  if (!best) return std::nullopt;
  ++best->ahead_coming;
  slots_.found_work(*best);
  claims_.emplace(++last_claim_, Claim{best->endpoint->id, true, best->endpoint->url});
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
  Claim granted = it == claims_.end() ? Claim{} : std::move(it->second);
  if (it != claims_.end()) claims_.erase(it);
  if (granted.ahead) {
    settle_ahead(granted, std::move(job));
    return;
  }
  const std::string& endpoint_id = granted.endpoint_id;
  if (job) {
    // The claim counted the attempt: the endpoint stays known until it ends.
    EndpointState* state = endpoint_id.empty() ? nullptr : slots_.find(endpoint_id);
    if (state && keeps_ahead(state) && state->serves(job->record->name)) {
      dispatch(*state, std::move(*job));
      return;
    }
    dispatcher_.wont_run(*job);
    if (!state) {
      spdlog::warn("job {}: its endpoint is gone; it runs again once its attempt times out",
                   job->id.str());
      return;
    }
    // Deregistered, held off or registered again for other names while the push was in Redis:
    // the job goes back to its queue, its attempt not counted, for whoever serves it, and its
    // slot goes unused.
    give_back_job(std::move(*job));
  }
  if (endpoint_id.empty()) return;
  if (std::string holder = slots_.lease_holder(endpoint_id);
      slots_.unused(endpoint_id, 1, stopping_) > 0) {
    spawn_release(std::move(holder), 1);
  }
  update_claimable();
  loop_.poke();
}

// A job taken to wait ahead of a busy endpoint joins the jobs reserved ahead of it: it starts on
// the next slot that frees, or goes back to its queue as they do (the endpoint went away, was
// held off or registered again elsewhere or for other names meanwhile, the master stops).
void Scheduler::settle_ahead(const Claim& claim, std::optional<store::ReservedJob> job) {
  EndpointState* state = claim.endpoint_id.empty() ? nullptr : slots_.find(claim.endpoint_id);
  if (state) --state->ahead_coming;
  if (job) {
    // settle() counted its attempt as running here for polls of its result; start_ahead counts
    // it again when it starts, and one waiting or given back does not run here yet.
    dispatcher_.wont_run(*job);
    const bool stays =
        keeps_ahead(state) && state->endpoint->url == claim.url && state->serves(job->record->name);
    if (stays) {
      state->ahead.push_back(std::move(*job));
      start_ahead(*state);
      count_ahead(*state);
    } else {
      give_back_job(std::move(*job));
    }
  }
  if (state) slots_.forget_if_gone(claim.endpoint_id);
  update_claimable();
  loop_.poke();
}

// What pushers read, off the strand, before asking for a slot (may_claim): some endpoint
// takes_claims, as claim_one asks. Kept up to date wherever slots or heads change on the strand
// (the end of each pass and step, a claim, a settle, an attempt's end): a stale yes costs the
// push a wasted hop to the strand, a stale no queues its job the usual way. Under a backlog it
// is no, and pushes skip the hop. It does not know the pushed name: while a busy endpoint with
// an empty queue has room ahead, a push of a name it does not serve makes the hop for nothing.
void Scheduler::update_claimable() {
  const SteadyTime now = clock_();
  const bool all_busy = none_open(now);
  bool any = false;
  for (const auto& [id, state] : slots_.all()) {
    if (takes_claims(state, now) || takes_claims_ahead(state, now, all_busy)) {
      any = true;
      break;
    }
  }
  claimable_.store(any && !stopping_, std::memory_order_relaxed);
}

}  // namespace jq::scheduler
