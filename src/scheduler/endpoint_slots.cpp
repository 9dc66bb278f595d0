#include "src/scheduler/endpoint_slots.hpp"

#include <algorithm>
#include <iterator>
#include <ranges>

#include "src/dispatch/worker_call.hpp"

namespace jq::scheduler {
namespace {

// Whether the two serve a name in common: the fewer names of one looked up in the other's.
bool overlaps(const EndpointState& a, const EndpointState& b) {
  if (a.endpoint->all_names || b.endpoint->all_names) return true;
  const EndpointState& fewer = a.names.size() <= b.names.size() ? a : b;
  const EndpointState& more = &fewer == &a ? b : a;
  for (std::string_view n : fewer.names) {
    if (more.names.contains(n)) return true;
  }
  return false;
}

// Another endpoint that could take a job of `state`'s now: a name in common and a free slot (one
// with none is open only to reserve ahead).
bool rival_with_room(const EndpointState& state, const EndpointState& other) {
  return &other != &state && other.inflight < other.endpoint->concurrency && overlaps(state, other);
}

// Jobs its running attempts answer within `window` at the recent pace, at most one each.
int ahead_size(const EndpointState& state, int running, std::chrono::microseconds window) {
  if (state.answer_time.count() <= 0 || window.count() <= 0 || running <= 0) return 0;
  const auto fit = static_cast<std::int64_t>(running) * window.count() / state.answer_time.count();
  return static_cast<int>(std::min<std::int64_t>(running, fit));
}

int ahead_room(const EndpointState& state, int running, std::chrono::microseconds window) {
  return std::max(0, ahead_size(state, running, window) - state.waiting_ahead());
}

// Held slots that go back once the endpoint has been idle for kSlotLinger; not those held for
// jobs ahead, there or on their way.
bool may_linger_out(const EndpointState& state) {
  return state.held > 0 && state.idle_since && state.ahead.empty() && state.ahead_coming == 0;
}

// The endpoint that took the attempts of `it` in, or end() when none did.
template <class Map, class It>
It next_heir(Map& endpoints, It it) {
  return it->second.heir.empty() ? endpoints.end() : endpoints.find(it->second.heir);
}

// Deregistered, and nothing of it left to settle.
bool gone(const EndpointState& state) {
  return state.removed && state.inflight == 0 && state.reserving == 0 && state.ahead_coming == 0;
}

}  // namespace

bool EndpointState::serves(std::string_view name) const {
  return endpoint->all_names || names.contains(name);
}

bool EndpointState::open(SteadyTime now) const {
  return !removed && inflight < endpoint->concurrency && now >= hold_until;
}

bool EndpointState::may_reserve(SteadyTime now, std::chrono::microseconds window) const {
  if (open(now)) return true;
  return !removed && now >= hold_until && now >= no_ahead_until &&
         ahead_room(*this, inflight, window) > 0;
}

EndpointSlots::Gone EndpointSlots::update(std::vector<workers::Endpoint> loaded,
                                          const PoolFactory& make_pool,
                                          std::vector<std::string>* restate) {
  std::map<std::string, EndpointState> next;
  Gone gone;
  for (auto& e : loaded) {
    EndpointState state;
    if (auto it = endpoints_.find(e.id); it != endpoints_.end()) {
      state = std::move(it->second);
      state.removed = false;
      // Registered again with another url or other names: its jobs ahead were chosen for what
      // it was.
      const workers::Endpoint& was = *state.endpoint;
      if (was.url != e.url || was.names != e.names || was.all_names != e.all_names) {
        take_ahead(state, gone.jobs);
      }
      if (e.concurrency < was.concurrency) {
        if (state.held > 0) gone.slots.emplace_back(e.id, take_held(state));
        state.shrink = state.inflight;
      }
    }
    if (!state.pool || state.endpoint->url != e.url || state.endpoint->ca_file != e.ca_file) {
      state.pool = make_pool(e);
    } else {
      state.pool->keep_idle(static_cast<std::size_t>(e.concurrency));
    }
    std::string id = e.id;
    state.endpoint = std::make_shared<const workers::Endpoint>(std::move(e));
    state.names = {state.endpoint->names.begin(), state.endpoint->names.end()};
    next.emplace(std::move(id), std::move(state));
  }
  for (auto& [id, state] : endpoints_) {
    if (next.contains(id)) continue;
    if (state.held > 0) gone.slots.emplace_back(id, take_held(state));
    take_ahead(state, gone.jobs);
    if (state.inflight > 0 || state.reserving > 0) {
      state.removed = true;
      next.emplace(id, std::move(state));
    }
  }
  endpoints_ = std::move(next);
  adopt_removed(restate);
  return gone;
}

// Without this a worker whose registration lapsed while it ran jobs (its heartbeats missed for
// a while) and that registered again would get its whole concurrency on top of them.
void EndpointSlots::adopt_removed(std::vector<std::string>* restate) {
  // Loaded again under its own id (ids are never reused: a store that failed over to a replica
  // that had not seen it go), an endpoint's attempts are its own again.
  for (auto& [id, state] : endpoints_) {
    if (state.removed || state.heir.empty()) continue;
    // Both leases are stated again: the heirs' held these attempts, its own did not.
    if (restate) restate->push_back(id);
    for (auto heir = endpoints_.find(state.heir); heir != endpoints_.end();
         heir = next_heir(endpoints_, heir)) {
      heir->second.inflight -= state.inflight;
      if (restate) restate->push_back(heir->first);
    }
    state.heir.clear();
  }
  std::erase_if(endpoints_, [](const auto& entry) { return gone(entry.second); });
  std::map<std::string_view, std::string_view> by_url;  // of the endpoints that serve
  for (const auto& [id, state] : endpoints_) {
    if (!state.removed) by_url.emplace(state.endpoint->url, id);
  }
  for (auto& [id, state] : endpoints_) {
    if (!state.removed || !state.heir.empty() || state.inflight == 0) continue;
    const auto found = by_url.find(state.endpoint->url);
    if (found == by_url.end()) continue;
    state.heir = found->second;
    EndpointState& heir = endpoints_.at(state.heir);
    heir.inflight += state.inflight;
    // Registered again with a lower concurrency: the slots beyond it go back as they free.
    heir.shrink = std::max(heir.shrink, heir.inflight - heir.endpoint->concurrency);
    if (restate) restate->push_back(state.heir);
  }
}

std::map<std::string, EndpointState>::iterator EndpointSlots::heir_of_attempts(
    std::map<std::string, EndpointState>::iterator it, int attempts) {
  for (auto heir = next_heir(endpoints_, it); heir != endpoints_.end();
       heir = next_heir(endpoints_, it)) {
    it->second.inflight -= attempts;
    if (gone(it->second)) endpoints_.erase(it);
    it = heir;
  }
  return it;
}

std::string EndpointSlots::lease_holder(const std::string& id) const {
  auto it = endpoints_.find(id);
  if (it == endpoints_.end()) return id;
  for (auto heir = next_heir(endpoints_, it); heir != endpoints_.end();
       heir = next_heir(endpoints_, it)) {
    it = heir;
  }
  return it->first;
}

std::vector<EndpointState*> EndpointSlots::open(SteadyTime now, std::chrono::microseconds window) {
  std::vector<EndpointState*> out;
  for (auto& [id, state] : endpoints_) {
    if (state.may_reserve(now, window)) out.push_back(&state);
  }
  std::stable_sort(out.begin(), out.end(), [](const EndpointState* a, const EndpointState* b) {
    return a->inflight < b->inflight;
  });
  return out;
}

int EndpointSlots::room(const EndpointState& state) {
  return std::clamp(state.endpoint->concurrency - state.inflight, 0, kMaxBatch);
}

int EndpointSlots::rivals_room(const EndpointState& state,
                               const std::vector<EndpointState*>& open) {
  int total = 0;
  for (const EndpointState* other : open) {
    if (rival_with_room(state, *other)) total += other->endpoint->concurrency - other->inflight;
  }
  return total;
}

int EndpointSlots::want(const EndpointState& state, const std::vector<EndpointState*>& open) {
  const std::int64_t concurrency = state.endpoint->concurrency;
  int want = room(state);
  for (const EndpointState* other : open) {
    if (!rival_with_room(state, *other)) continue;
    // Up to the share of its concurrency the rival would have with one more job, rounded up:
    // by counts alone, an endpoint of concurrency 50 beside one of 8 was held to about 9.
    const std::int64_t theirs = other->endpoint->concurrency;
    const std::int64_t up_to = ((other->inflight + 1) * concurrency + theirs - 1) / theirs;
    want = static_cast<int>(
        std::min<std::int64_t>(want, std::max<std::int64_t>(1, up_to - state.inflight)));
  }
  return want;
}

int EndpointSlots::ahead(const EndpointState& state, int slots,
                         const std::vector<EndpointState*>& open, std::chrono::microseconds window,
                         SteadyTime now) {
  if (now < state.no_ahead_until) return 0;
  for (const EndpointState* other : open) {
    if (other == &state || !overlaps(state, *other)) continue;
    if (other->open(now)) return 0;
  }
  return std::min(ahead_room(state, state.inflight + slots, window), kMaxBatch - slots);
}

int EndpointSlots::ahead_room_now(const EndpointState& state, std::chrono::microseconds window) {
  return ahead_room(state, state.inflight, window);
}

void EndpointSlots::found_none(EndpointState& state, SteadyTime now) {
  if (!state.idle_since) state.idle_since = now;
}

void EndpointSlots::started(EndpointState& state, int jobs) {
  state.held -= jobs;
  state.inflight += jobs;
}

std::vector<EndpointState*> EndpointSlots::releasable(SteadyTime now) {
  std::vector<EndpointState*> out;
  for (auto& [id, state] : endpoints_) {
    const bool lingered = may_linger_out(state) && now - *state.idle_since >= kSlotLinger;
    if (state.held > 0 && (now < state.hold_until || lingered)) out.push_back(&state);
  }
  return out;
}

int EndpointSlots::take_held(EndpointState& state) {
  state.idle_since.reset();
  return std::exchange(state.held, 0);
}

std::vector<store::ReservedJob> EndpointSlots::take_ahead(
    EndpointState& state, const std::function<bool(const store::ReservedJob&)>& which) {
  std::vector<store::ReservedJob> taken;
  // Asked at every attempt's end: most often nothing is taken, and the jobs stay where they are.
  auto first = std::find_if(state.ahead.begin(), state.ahead.end(), which);
  if (first == state.ahead.end()) return taken;
  std::deque<store::ReservedJob> kept(std::make_move_iterator(state.ahead.begin()),
                                      std::make_move_iterator(first));
  taken.push_back(std::move(*first));
  for (auto& job : std::ranges::subrange(std::next(first), state.ahead.end())) {
    if (which(job)) {
      taken.push_back(std::move(job));
    } else {
      kept.push_back(std::move(job));
    }
  }
  state.ahead = std::move(kept);
  return taken;
}

void EndpointSlots::take_ahead(EndpointState& state, std::vector<store::ReservedJob>& into) {
  for (auto& job : state.ahead) into.push_back(std::move(job));
  state.ahead.clear();
}

void EndpointSlots::forget_if_gone(const std::string& id) {
  auto it = endpoints_.find(id);
  if (it != endpoints_.end() && gone(it->second)) endpoints_.erase(it);
}

int EndpointSlots::unused(const std::string& id, int slots, bool stopping) {
  auto it = endpoints_.find(id);
  if (it == endpoints_.end() || slots <= 0) return 0;
  it = heir_of_attempts(it, slots);
  EndpointState& state = it->second;
  state.inflight -= slots;
  const bool give_back = state.removed || stopping || state.shrink > 0;
  state.shrink = std::max(0, state.shrink - slots);
  if (!give_back) state.held += slots;
  if (gone(state)) endpoints_.erase(it);
  return give_back ? slots : 0;
}

std::optional<AttemptFollowUp> EndpointSlots::finished(const std::string& id,
                                                       const dispatch::AttemptEnd& end,
                                                       SteadyTime now, bool stopping) {
  auto it = endpoints_.find(id);
  if (it == endpoints_.end()) return std::nullopt;
  AttemptFollowUp follow;
  if (!it->second.heir.empty()) {
    it = heir_of_attempts(it, 1);
    follow.heir = it->first;
  }
  EndpointState& state = it->second;
  --state.inflight;
  // The slot stays leased for the next job; the scheduler gives it back when there is none.
  if (state.removed || stopping || state.shrink > 0) {
    state.shrink = std::max(0, state.shrink - 1);
    follow.release_slot = true;
  } else {
    ++state.held;
  }
  using Verdict = dispatch::AttemptEnd::Verdict;
  switch (end.verdict) {
    case Verdict::answered:
      // An eighth of each new answer: steady enough for a window of a few answers' worth.
      state.answer_time =
          state.answer_time.count() == 0 ? end.took : (state.answer_time * 7 + end.took) / 8;
      if (state.unreachable_backoff.count() > 0) {
        state.unreachable_backoff = std::chrono::milliseconds(0);
        follow.mark_up = true;
      }
      break;
    case Verdict::busy:
      state.hold_until = std::max(state.hold_until, now + end.hold_off);
      follow.mark_busy =
          std::chrono::duration_cast<std::chrono::milliseconds>(state.hold_until - now);
      break;
    case Verdict::unreachable:
      // Attempts sent together fail together: the first failure holds the endpoint off, and
      // the others, ending while it is held off, tell of the same outage. Only a failure after
      // the hold (a new try) doubles the backoff; else a worker that was killed with 16 jobs in
      // flight would be left alone for 250 ms * 2^15, the cap, however soon it came back.
      if (now >= state.hold_until || state.unreachable_backoff.count() == 0) {
        state.unreachable_backoff =
            std::clamp(state.unreachable_backoff * 2, kUnreachableMin, kUnreachableMax);
      }
      state.hold_until = std::max(state.hold_until, now + state.unreachable_backoff);
      follow.mark_down = state.unreachable_backoff;
      follow.clear_connections = state.pool;
      break;
  }
  if (gone(state)) endpoints_.erase(it);
  return follow;
}

std::chrono::steady_clock::duration EndpointSlots::next_wait(
    SteadyTime now, bool can_release, std::chrono::steady_clock::duration at_most) const {
  using Duration = std::chrono::steady_clock::duration;
  Duration wait = at_most;
  for (const auto& [id, state] : endpoints_) {
    if (!state.removed && state.hold_until > now) {
      wait = std::min<Duration>(wait, state.hold_until - now);
    }
    if (can_release && may_linger_out(state)) {
      const Duration left = *state.idle_since + kSlotLinger - now;
      wait = std::clamp<Duration>(left, Duration::zero(), wait);
    }
  }
  return wait;
}

EndpointState* EndpointSlots::find(const std::string& id) {
  auto it = endpoints_.find(id);
  return it == endpoints_.end() ? nullptr : &it->second;
}

}  // namespace jq::scheduler
