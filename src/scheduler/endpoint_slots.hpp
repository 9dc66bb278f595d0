// This master's bookkeeping of the worker endpoints it dispatches to: jobs in flight, slots held
// between jobs, and when an endpoint may take jobs again after a busy answer, an unreachable
// attempt or a full round. No Redis and no clock of its own: the scheduler passes `now` and does
// what the answers say (lease, give back, mark down), so every decision here is a unit test away.
//
// An endpoint's slots are leased in Redis so its concurrency holds across masters. They stay
// with this master between jobs while there is work for it (jobs arriving one by one find their
// slot held), and go back once it has been idle for kSlotLinger or while it is held off.
//
// While every slot is busy, an endpoint may also hold jobs reserved ahead (dispatch.reserve_ahead):
// as many as it answers in that window at its recent pace, so that a slot freeing starts the next
// job at once instead of waiting for a reservation's round trip.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "src/dispatch/dispatcher.hpp"
#include "src/workers/endpoint.hpp"

namespace jq::dispatch {
class ConnectionPool;
}

namespace jq::scheduler {

using SteadyTime = std::chrono::steady_clock::time_point;

// Jobs reserved for one endpoint in one script call.
inline constexpr int kMaxBatch = 64;
// Reservations for one endpoint on their way at once. The loop does not wait for one (other
// endpoints go on), and slots freed meanwhile join the next one. Measured in the backlog drain
// at concurrency 50 (docs/BENCHMARKS.md): a loop that waited for each answer drained 8-13 %
// slower, two on their way no faster than that (their batches were smaller).
inline constexpr int kReservationsInFlight = 1;
// An endpoint full across masters (no slot granted) is asked again after this long.
inline constexpr std::chrono::milliseconds kFullPause{20};
// Slots with no job for them go back to Redis after this long: another master waits at most
// this long for slots this one is not using.
inline constexpr std::chrono::milliseconds kSlotLinger{100};
// An unreachable endpoint is held off for a backoff doubling from the first to the second, once
// per try after the hold (attempts that failed together count once).
inline constexpr std::chrono::milliseconds kUnreachableMin{250};
inline constexpr std::chrono::milliseconds kUnreachableMax{30'000};

struct EndpointState {
  std::shared_ptr<const workers::Endpoint> endpoint;
  // The names it serves (views of endpoint->names; empty for "*"), looked up by hash: serves()
  // is asked of every claimable endpoint per claim, and of every pair of open endpoints per pass,
  // and an endpoint may serve 1,000 names.
  std::unordered_set<std::string_view> names;
  std::shared_ptr<dispatch::ConnectionPool> pool;
  int inflight = 0;   // attempts of this master, and slots a reservation on its way may fill
  int held = 0;       // slots leased by this master and not in use
  int reserving = 0;  // reservations on their way
  // Slots in use when its concurrency was lowered: each goes back to Redis when it frees, so
  // that new starts lease against every master's holdings and the new limit holds across
  // masters (a slot kept held would skip that check while a backlog lasts).
  int shrink = 0;
  std::optional<SteadyTime> idle_since;  // when a round last found no job for it
  SteadyTime hold_until{};               // takes no jobs before then
  bool removed = false;  // deregistered while attempts ran: gone when the last one ends
  // Removed while attempts ran, and its url registered again under a new id (a ttl that lapsed,
  // a delete): the id whose count of attempts took this one's in (see EndpointSlots::update).
  std::string heir;
  std::chrono::milliseconds unreachable_backoff{0};
  // How long its answers took lately (a moving average; zero before the first one).
  std::chrono::microseconds answer_time{0};
  std::deque<store::ReservedJob> ahead;  // reserved ahead of a free slot, in order
  int ahead_coming = 0;  // asked for by the reservation on its way, and claimed by pushes
  // Reserves nothing ahead before then: a job ahead had constraints, or waited too long.
  SteadyTime no_ahead_until{};

  bool serves(std::string_view name) const;
  // The jobs ahead of it, there and on their way.
  int waiting_ahead() const { return static_cast<int>(ahead.size()) + ahead_coming; }
  bool open(SteadyTime now) const;  // may take a job now
  // May reserve now: open, or (busy) with room for jobs ahead.
  bool may_reserve(SteadyTime now, std::chrono::microseconds window) const;
};

// What the scheduler does when an attempt ended.
struct AttemptFollowUp {
  bool release_slot = false;  // give the attempt's slot back at once (else it is held)
  // Tell Redis the endpoint is down until now + this (unreachable), or up again (answered after
  // being down): the endpoint's health as other masters and GET /v1/workers see it.
  std::optional<std::chrono::milliseconds> mark_down;
  bool mark_up = false;
  // Busy: held back for this long from now (its Retry-After, capped); what it had ahead goes
  // back. Every master hears of it from the dispatcher's mark (Dispatcher::run_attempt).
  std::optional<std::chrono::milliseconds> mark_busy;
  // Unreachable: its pooled connections are not worth keeping.
  std::shared_ptr<dispatch::ConnectionPool> clear_connections;
  // The endpoint registered again under a new id while the attempt ran (its heir): the slot and
  // the health above are that one's. Empty: the attempt's own endpoint.
  std::string heir;
};

class EndpointSlots {
 public:
  using PoolFactory =
      std::function<std::shared_ptr<dispatch::ConnectionPool>(const workers::Endpoint&)>;

  // What endpoints that are gone leave behind, to give back: their held slots and their jobs
  // reserved ahead.
  struct Gone {
    std::vector<std::pair<std::string, int>> slots;
    std::vector<store::ReservedJob> jobs;
  };
  // The registrations as loaded. An endpoint removed with attempts or a reservation on their
  // way keeps counting (closed) until they end; registered again, it opens again. Registered
  // again with another url or other names, it leaves its jobs ahead. Its url registered again
  // under a new id, that endpoint is the same server, still running them: they count in its
  // concurrency too (its heir), whose lease is then stated again (`restate`), and what they
  // leave (a slot, a health) is the heir's.
  Gone update(std::vector<workers::Endpoint> loaded, const PoolFactory& make_pool,
              std::vector<std::string>* restate = nullptr);
  // The id whose lease the slots of endpoint `id` belong to: its heir's (and that one's heir's),
  // or its own.
  std::string lease_holder(const std::string& id) const;

  // Endpoints that may reserve now (a free slot, or room ahead within `window`), fewest
  // outstanding first.
  std::vector<EndpointState*> open(SteadyTime now, std::chrono::microseconds window = {});
  // How many jobs to reserve for `state`: its free slots, at most kMaxBatch, and no more than
  // gets its share of its concurrency in use to what the least busy rival with a free slot that
  // serves a name in common would have with one job more (endpoints that can take the same jobs
  // share them by fewest outstanding requests, in proportion to their concurrency), at least 1.
  static int want(const EndpointState& state, const std::vector<EndpointState*>& open);
  // Its free slots, at most kMaxBatch: what it asks for when there are jobs enough for every
  // endpoint (sharing them out only matters while they are scarce).
  static int room(const EndpointState& state);
  // The free slots of the open rivals that serve a name in common with `state`.
  static int rivals_room(const EndpointState& state, const std::vector<EndpointState*>& open);
  // How many jobs to reserve ahead for `state` beyond the `slots` about to start: room up to what
  // its running attempts answer within `window` at their recent pace (at most one per attempt),
  // none while a rival serving a name in common has a free slot (the jobs are better started
  // there now) or while its jobs had constraints.
  static int ahead(const EndpointState& state, int slots, const std::vector<EndpointState*>& open,
                   std::chrono::microseconds window, SteadyTime now);
  // Room for one more job ahead of `state` as it runs now, within `window` (the jobs ahead and
  // those on their way counted): what a push may take to wait ahead of a busy endpoint.
  static int ahead_room_now(const EndpointState& state, std::chrono::microseconds window);

  void found_work(EndpointState& state) { state.idle_since.reset(); }
  void found_none(EndpointState& state, SteadyTime now);
  // No slot could be leased (the endpoint is full across masters): ask again in kFullPause.
  void full(EndpointState& state, SteadyTime now) { state.hold_until = now + kFullPause; }
  void started(EndpointState& state, int jobs);

  // Slots to give back now: of endpoints held off, and of those idle for kSlotLinger.
  std::vector<EndpointState*> releasable(SteadyTime now);
  // The held slots of `state`, taken away to be given back.
  static int take_held(EndpointState& state);
  // Its jobs reserved ahead (those `which` picks), taken away to be given back.
  static std::vector<store::ReservedJob> take_ahead(
      EndpointState& state, const std::function<bool(const store::ReservedJob&)>& which);
  // All of them, appended to `into`.
  static void take_ahead(EndpointState& state, std::vector<store::ReservedJob>& into);

  // Slots counted as started that got no job (a claim whose push did not take it, what a
  // reservation did not find): held again, or returned to give back when the endpoint is gone
  // or the scheduler stops.
  int unused(const std::string& id, int slots, bool stopping);

  // A deregistered endpoint stays known while attempts or reservations of it are on their way;
  // the answer of its last reservation forgets it.
  void forget_if_gone(const std::string& id);

  // An attempt on endpoint `id` ended; nullopt when the endpoint is unknown.
  std::optional<AttemptFollowUp> finished(const std::string& id, const dispatch::AttemptEnd& end,
                                          SteadyTime now, bool stopping);

  // How long the scheduler may sleep: until the earliest held-off endpoint opens or held slots
  // linger out (the latter only while `can_release`), at most `at_most`.
  std::chrono::steady_clock::duration next_wait(SteadyTime now, bool can_release,
                                                std::chrono::steady_clock::duration at_most) const;

  std::map<std::string, EndpointState>& all() { return endpoints_; }
  EndpointState* find(const std::string& id);

 private:
  // Removed endpoints running attempts whose url serves again under another id: the attempts
  // count there too (update's heirs).
  void adopt_removed(std::vector<std::string>* restate);
  // Where `attempts` of endpoint `it` that ended, or slots it did not use, count: they leave
  // every removed one on the way to its last heir (which may forget them), and that heir is
  // returned (`it` itself without one).
  std::map<std::string, EndpointState>::iterator heir_of_attempts(
      std::map<std::string, EndpointState>::iterator it, int attempts);

  std::map<std::string, EndpointState> endpoints_;
};

}  // namespace jq::scheduler
