// The scheduler's jobs reserved ahead of a busy endpoint (dispatch.reserve_ahead,
// docs/ARCHITECTURE.md step 9): starting them on the slots that free, giving back those that
// will not start soon, and the gauge that counts them. EndpointSlots sizes them.
#include "src/scheduler/scheduler.hpp"

#include <algorithm>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>

namespace jq::scheduler {
namespace {

using std::chrono::milliseconds;

// An endpoint reserves nothing ahead for this long after a job ahead of it went back for having
// constraints (a constraint counts a job as started when it is reserved, and one kept ahead
// would start later than counted) or for waiting too long (its running attempts take longer
// than their recent pace said).
constexpr milliseconds kNoAheadPause{10'000};

// A job reserved ahead is meant to wait about `window` (the endpoint's recent pace says so). It
// goes back once it waited four times that, when the running attempts take longer than the pace
// said, and at the latest once half its timeout is gone, rather than run with what is left (its
// worker sees the deadline, and the reaper would take it back).
std::int64_t give_back_at_ms(const store::ReservedJob& job, std::chrono::microseconds window) {
  const std::int64_t reserved_at = job.deadline_ms - job.record->timeout_ms;
  const std::int64_t patience_ms = std::max<std::int64_t>(1, 4 * window.count() / 1000);
  return reserved_at + std::min(patience_ms, job.record->timeout_ms / 2);
}

}  // namespace

bool Scheduler::keeps_ahead(const EndpointState* state) {
  return state && !stopping_ && !state->removed && clock_() >= state->hold_until;
}

// Until the first job ahead is due to go back (the next step gives it back), at most `at_most`.
Periodic::Duration Scheduler::ahead_wait(Periodic::Duration at_most) {
  const std::int64_t now_ms = store_.now_ms();
  std::int64_t wait_ms = std::chrono::duration_cast<milliseconds>(at_most).count();
  for (const auto& [id, state] : slots_.all()) {
    for (const store::ReservedJob& job : state.ahead) {
      const std::int64_t due_ms = give_back_at_ms(job, reserve_ahead_);
      wait_ms = std::min(wait_ms, std::max<std::int64_t>(0, due_ms - now_ms + 1));
    }
  }
  return milliseconds(wait_ms);
}

// Starts jobs reserved ahead on the slots held, in order. A job of a queue paused meanwhile, or
// one due to go back, goes back instead; so do jobs with constraints (never kept ahead), and
// all of them when no attempt runs and no slot is held (nothing would free one for them).
void Scheduler::start_ahead(EndpointState& state) {
  if (state.ahead.empty()) return;
  const std::size_t before = state.ahead.size();
  std::vector<store::ReservedJob> back;
  const SteadyTime now = clock_();
  const std::int64_t now_ms = store_.now_ms();
  // Either way the endpoint keeps nothing ahead for a while (kNoAheadPause): late, its pace
  // misled; constrained, it was not to be kept ahead (one on a free slot starts as usual).
  auto pause_ahead_if = [&](bool go) {
    if (go) state.no_ahead_until = now + kNoAheadPause;
    return go;
  };
  auto late = [&](const store::ReservedJob& job) {
    return pause_ahead_if(now_ms > give_back_at_ms(job, reserve_ahead_));
  };
  while (!state.ahead.empty() && state.held > 0 && state.open(now) && !stopping_) {
    store::ReservedJob job = std::move(state.ahead.front());
    state.ahead.pop_front();
    if (late(job) || paused_.contains(job.record->name)) {
      back.push_back(std::move(job));
      continue;
    }
    slots_.started(state, 1);
    dispatcher_.will_run(job);
    dispatch(state, std::move(job));
  }
  const bool stranded = state.inflight == 0 && state.held == 0;
  auto left = EndpointSlots::take_ahead(state, [&](const store::ReservedJob& job) {
    return late(job) || pause_ahead_if(!job.record->constraints.empty()) || stranded ||
           paused_.contains(job.record->name);
  });
  for (auto& job : left) back.push_back(std::move(job));
  if (state.ahead.size() != before) count_ahead(state);
  give_back_jobs(std::move(back));
}

// Jobs ahead of `state` that `which` picks (all of them without) go back to their queues.
void Scheduler::give_back_ahead(EndpointState& state,
                                const std::function<bool(const store::ReservedJob&)>& which) {
  std::vector<store::ReservedJob> taken;
  if (which) {
    taken = EndpointSlots::take_ahead(state, which);
  } else {
    EndpointSlots::take_ahead(state, taken);
  }
  if (taken.empty()) return;
  count_ahead(state);
  give_back_jobs(std::move(taken));
}

void Scheduler::count_ahead(const EndpointState& state) {
  metrics_.worker(state.endpoint->url).reserved_ahead.set(static_cast<double>(state.ahead.size()));
}

// Reserved jobs that will not run here go back to their queues, in their place and with their
// attempt not counted; never sent, they give back the rate steps they took too. Shutdown waits for
// them as for a reservation.
void Scheduler::give_back_jobs(std::vector<store::ReservedJob> jobs) {
  if (jobs.empty()) return;
  reserving_.fetch_add(1, std::memory_order_relaxed);
  asio::co_spawn(loop_.strand(), release_jobs(std::move(jobs)), [this](std::exception_ptr) {
    reserving_.fetch_sub(1, std::memory_order_relaxed);
  });
}

void Scheduler::give_back_job(store::ReservedJob job) {
  std::vector<store::ReservedJob> one;
  one.push_back(std::move(job));
  give_back_jobs(std::move(one));
}

asio::awaitable<void> Scheduler::release_jobs(std::vector<store::ReservedJob> jobs) {
  for (const store::ReservedJob& job : jobs) {
    auto r = co_await store_.release(job, /*unsent=*/true);
    if (!r) {
      spdlog::warn("job {}: not given back ({}); it runs again once its attempt times out",
                   job.id.str(), r.error().message);
    }
  }
}

}  // namespace jq::scheduler
