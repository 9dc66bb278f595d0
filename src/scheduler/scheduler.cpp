#include "src/scheduler/scheduler.hpp"

#include <algorithm>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

namespace jq::scheduler {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr int kMaxBatch = 64;           // jobs reserved in one script call
constexpr milliseconds kTick{1000};     // the safety net when nothing wakes us
constexpr milliseconds kFullPause{20};  // endpoint full across masters
// Slots with no job for them go back to Redis after this long: jobs arriving one by one find
// their slot still held (no acquire and release per job), and another master waits at most
// this long for slots this one is not using.
constexpr milliseconds kSlotLinger{100};
constexpr milliseconds kUnreachableMin{250};
constexpr milliseconds kUnreachableMax{30'000};
constexpr std::size_t kMaxIdleConnections = 64;

// The one that runs first; an absent head loses.
const std::optional<store::QueueHead>& better(const std::optional<store::QueueHead>& a,
                                              const std::optional<store::QueueHead>& b) {
  if (!a) return b;
  if (!b) return a;
  return b->before(*a) ? b : a;
}

bool same(const store::QueueHead& a, const store::QueueHead& b) {
  return a.priority == b.priority && a.member == b.member;
}

bool overlaps(const workers::Endpoint& a, const workers::Endpoint& b) {
  if (a.all_names || b.all_names) return true;
  for (const auto& n : a.names) {
    if (b.serves(n)) return true;
  }
  return false;
}

}  // namespace

Scheduler::Scheduler(asio::io_context& io, redis::Client& redis, const redis::Keys& keys,
                     store::DispatchStore& store, workers::WorkerStore& workers,
                     dispatch::Dispatcher& dispatcher)
    : io_(io),
      strand_(asio::make_strand(io.get_executor())),
      redis_(redis),
      keys_(keys),
      store_(store),
      workers_(workers),
      dispatcher_(dispatcher),
      wakeup_(strand_) {}

void Scheduler::start() {
  asio::co_spawn(strand_, run(), asio::detached);
}

void Scheduler::stop() {
  asio::post(strand_, [this] { stopping_ = true; });
  wakeup_.notify();
}

void Scheduler::on_event(const events::Event& event) {
  // Results and retries are the waiters' and the promoter's business: not worth a post.
  if (event.kind == events::EventKind::result || event.kind == events::EventKind::scheduled) {
    return;
  }
  asio::post(strand_, [this, event] {
    switch (event.kind) {
      case events::EventKind::pushed:
        if (event.arg.empty()) {
          reload_names_ = true;
          forget({});
        } else {
          names_.insert(event.arg);
          if (event.head && event.head->shard >= 0 && event.head->shard < store_.shards()) {
            announce(store::QueueHead{event.head->shard, event.arg, event.head->priority,
                                      event.head->member});
          } else {
            forget(event.arg);
          }
        }
        break;
      case events::EventKind::workers:
        reload_workers_ = true;
        break;
      case events::EventKind::paused:
        reload_paused_ = true;
        break;
      default:
        return;
    }
    wakeup_.notify();
  });
}

Scheduler::QueueView& Scheduler::view(const std::string& name, int shard) {
  auto it = queues_.find(name);
  if (it == queues_.end()) {
    it = queues_.emplace(name, std::vector<QueueView>(static_cast<std::size_t>(store_.shards())))
             .first;
  }
  return it->second[static_cast<std::size_t>(shard)];
}

// A job became ready: the queue's head is it or stays what it was, whichever runs first.
void Scheduler::announce(store::QueueHead head) {
  QueueView& v = view(head.name, head.shard);
  std::optional<store::QueueHead> h(std::move(head));
  if (v.busy) v.announced = better(v.announced, h);
  if (v.known) v.head = better(v.head, h);
}

void Scheduler::forget(const std::string& name) {
  for (auto& [n, shards] : queues_) {
    if (!name.empty() && n != name) continue;
    for (QueueView& v : shards) {
      v.known = false;
      if (v.busy) v.forgotten = true;
    }
  }
}

void Scheduler::begin(QueueView& v) {
  v.busy = true;
  v.forgotten = false;
  v.announced.reset();
}

// Redis answered the queue's head (nullopt: empty, or the call failed when `known` must stay
// false); announcements that arrived meanwhile may be newer than the answer.
void Scheduler::settle(QueueView& v, std::optional<store::QueueHead> fresh) {
  v.head = better(fresh, v.announced);
  v.known = !v.forgotten;
  v.busy = false;
  v.announced.reset();
}

asio::awaitable<void> Scheduler::run() {
  while (!stopping_) {
    if (!redis_.ready()) {
      redis_lost_ = true;
    } else {
      if (std::exchange(redis_lost_, false)) co_await release_all_held();
      if (steady_clock::now() >= next_refresh_) {
        forget({});
        next_refresh_ = steady_clock::now() + kTick;
      }
      try {
        // Reload before every round: events that arrive mid-pass must count in the next one.
        do {
          co_await reload();
        } while (!stopping_ && co_await round());
      } catch (const std::exception& e) {
        spdlog::error("scheduler: {}", e.what());
      }
    }
    co_await wakeup_.wait(next_wait());
  }
  // Slots kept for the next job go back now rather than when this master's heartbeat lapses.
  co_await release_all_held();
}

// After Redis was away, slots held may no longer be ours (other masters drop the holdings of a
// master whose heartbeat lapsed): give them back and lease afresh, rather than trust them.
asio::awaitable<void> Scheduler::release_all_held() {
  for (auto& [id, state] : endpoints_) co_await release_idle(state);
}

// Until the earliest held-off endpoint may take jobs again, at most a tick.
steady_clock::duration Scheduler::next_wait() const {
  const auto now = steady_clock::now();
  steady_clock::duration wait = kTick;
  for (const auto& [id, state] : endpoints_) {
    if (state.hold_until > now && state.hold_until != steady_clock::time_point::max()) {
      wait = std::min<steady_clock::duration>(wait, state.hold_until - now);
    }
    if (state.held > 0 && state.idle_since && redis_.ready()) {
      const steady_clock::duration left = *state.idle_since + kSlotLinger - now;
      wait = std::clamp<steady_clock::duration>(left, steady_clock::duration::zero(), wait);
    }
  }
  return wait;
}

// Registrations, job names and paused queues, when an event said they changed.
asio::awaitable<void> Scheduler::reload() {
  if (reload_workers_) {
    auto loaded = co_await workers_.load_all();
    if (loaded) {
      reload_workers_ = false;
      std::map<std::string, EndpointState> next;
      for (auto& e : *loaded) {
        EndpointState state;
        if (auto it = endpoints_.find(e.id); it != endpoints_.end()) {
          state = std::move(it->second);
          // Registered again after a removal while its attempts ran: open again.
          if (state.hold_until == steady_clock::time_point::max()) state.hold_until = {};
        }
        if (!state.pool || state.endpoint->url != e.url) {
          state.pool = std::make_shared<dispatch::ConnectionPool>(
              io_.get_executor(), e.address.host, e.address.port, kMaxIdleConnections);
        }
        std::string id = e.id;
        state.endpoint = std::make_shared<const workers::Endpoint>(std::move(e));
        next.emplace(std::move(id), std::move(state));
      }
      // Endpoints removed with attempts still running keep counting until those end.
      std::vector<std::pair<std::string, int>> give_back;
      for (auto& [id, state] : endpoints_) {
        if (next.contains(id)) continue;
        if (state.held > 0) give_back.emplace_back(id, std::exchange(state.held, 0));
        if (state.inflight > 0) {
          state.hold_until = steady_clock::time_point::max();
          next.emplace(id, std::move(state));
        }
      }
      endpoints_ = std::move(next);
      for (auto& [id, n] : give_back) co_await workers_.release(id, n);
    }
  }
  if (reload_names_ || reload_paused_) {
    std::vector<std::vector<std::string>> commands;
    for (int s = 0; s < store_.shards(); ++s) commands.push_back({"SMEMBERS", keys_.names(s)});
    commands.push_back({"SMEMBERS", keys_.paused()});
    auto reply = co_await redis_.pipeline(std::move(commands));
    if (reply && reply->elements.size() == static_cast<std::size_t>(store_.shards()) + 1) {
      for (int s = 0; s < store_.shards(); ++s) {
        for (const auto& n : reply->elements[s].elements) names_.insert(n.str);
      }
      paused_.clear();
      for (const auto& n : reply->elements.back().elements) paused_.insert(n.str);
      reload_names_ = reload_paused_ = false;
    }
  }
}

// One pass over the endpoints with free slots, fewest outstanding first. True when it
// dispatched something (so another pass may find more).
asio::awaitable<bool> Scheduler::round() {
  const auto now = steady_clock::now();
  std::vector<EndpointState*> open;
  for (auto& [id, state] : endpoints_) {
    if (state.inflight < state.endpoint->concurrency && now >= state.hold_until) {
      open.push_back(&state);
    }
  }
  std::stable_sort(open.begin(), open.end(),
                   [](auto* a, auto* b) { return a->inflight < b->inflight; });
  bool progress = false;
  for (EndpointState* state : open) {
    int want = std::min(state->endpoint->concurrency - state->inflight, kMaxBatch);
    // Endpoints that can take the same jobs share them by fewest outstanding requests: take
    // only enough to get one past the least busy rival, then let it choose.
    if (auto rival = least_busy_rival(*state, open)) {
      want = std::min(want, std::max(1, *rival - state->inflight + 1));
    }
    const Fill result = co_await fill(*state, want);
    if (result == Fill::dispatched || result == Fill::retry) progress = true;
    if (result == Fill::dispatched) state->idle_since.reset();
    if (result == Fill::idle && !state->idle_since) state->idle_since = now;
  }
  for (auto& [id, state] : endpoints_) {
    // Held-off endpoints keep no slots they cannot use; idle ones keep them a little while.
    const bool lingered = state.idle_since && now - *state.idle_since >= kSlotLinger;
    if (state.held > 0 && (now < state.hold_until || lingered)) co_await release_idle(state);
  }
  co_return progress;
}

asio::awaitable<void> Scheduler::release_idle(EndpointState& state) {
  state.idle_since.reset();
  if (state.held == 0) co_return;
  const std::string id = state.endpoint->id;
  co_await workers_.release(id, std::exchange(state.held, 0));
}

// The fewest outstanding requests among the other open endpoints serving a name in common.
std::optional<int> Scheduler::least_busy_rival(const EndpointState& state,
                                               const std::vector<EndpointState*>& open) const {
  std::optional<int> least;
  for (const EndpointState* other : open) {
    if (other == &state || !overlaps(*state.endpoint, *other->endpoint)) continue;
    if (!least || other->inflight < *least) least = other->inflight;
  }
  return least;
}

// Reads the heads of queues this master knows nothing of, in one pipelined round trip. False
// when Redis did not answer (they stay unknown).
asio::awaitable<bool> Scheduler::read_heads(std::vector<store::QueueRef> queues,
                                            std::vector<QueueView*> views) {
  if (queues.empty()) co_return true;
  for (QueueView* v : views) begin(*v);
  auto heads = co_await store_.heads(std::move(queues));
  for (std::size_t i = 0; i < views.size(); ++i) {
    if (!heads) views[i]->forgotten = true;
    settle(*views[i], heads && i < heads->size() ? std::move((*heads)[i]) : std::nullopt);
  }
  co_return heads.has_value();
}

// Reserves up to `want` jobs for one endpoint and starts their attempts.
asio::awaitable<Scheduler::Fill> Scheduler::fill(EndpointState& state, int want) {
  std::vector<QueueView*> views;
  std::vector<store::QueueRef> unknown;
  std::vector<QueueView*> unknown_views;
  for (const auto& name : names_) {
    if (paused_.contains(name) || !state.endpoint->serves(name)) continue;
    for (int s = 0; s < store_.shards(); ++s) {
      QueueView& v = view(name, s);
      views.push_back(&v);
      if (!v.known && !v.busy) {
        unknown.push_back({s, name});
        unknown_views.push_back(&v);
      }
    }
  }
  if (!co_await read_heads(std::move(unknown), std::move(unknown_views))) {
    co_return Fill::unavailable;
  }
  // The best head and the next best (the bound), among queues not being reserved from.
  QueueView* best = nullptr;
  const store::QueueHead* second = nullptr;
  for (QueueView* v : views) {
    if (!v->known || v->busy || !v->head) continue;
    if (!best || v->head->before(*best->head)) {
      if (best) second = &*best->head;
      best = v;
    } else if (!second || v->head->before(*second)) {
      second = &*v->head;
    }
  }
  if (!best) co_return Fill::idle;
  const std::string endpoint_id = state.endpoint->id;
  if (state.held < want) {
    auto granted =
        co_await workers_.acquire(endpoint_id, want - state.held, state.endpoint->concurrency);
    if (granted) state.held += *granted;
  }
  if (state.held == 0) {
    state.hold_until = steady_clock::now() + kFullPause;
    co_return Fill::full;
  }
  if (!best->known || !best->head) co_return Fill::retry;  // changed while acquiring
  const store::QueueHead chosen = *best->head;
  std::optional<store::QueueHead> bound;
  int take = std::min(state.held, want);
  if (second) {
    bound = *second;
    // Heads of two shards can tie exactly (retries due at the same moment): take just the
    // chosen head then, since a bound equal to it would exclude it.
    if (!chosen.before(*bound)) {
      bound.reset();
      take = 1;
    }
  }
  store::QueueRef queue{chosen.shard,
                        chosen.name};  // named: g++ 12 mangles braced lists in co_await
  begin(*best);
  auto reservation = co_await store_.reserve(std::move(queue), take, std::move(bound));
  if (!reservation) {
    best->forgotten = true;
    settle(*best, std::nullopt);
    co_return Fill::unavailable;
  }
  const bool moved = !reservation->head || !same(*reservation->head, chosen);
  settle(*best, std::move(reservation->head));
  const int reserved = static_cast<int>(reservation->jobs.size());
  if (reserved == 0) co_return moved ? Fill::retry : Fill::idle;
  state.held -= reserved;
  state.inflight += reserved;
  for (auto& job : reservation->jobs) {
    dispatcher_.start(
        state.endpoint, state.pool, std::move(job), [this, endpoint_id](dispatch::AttemptEnd end) {
          asio::post(strand_, [this, endpoint_id, end] { finished(endpoint_id, end); });
        });
  }
  co_return Fill::dispatched;
}

void Scheduler::finished(const std::string& endpoint_id, dispatch::AttemptEnd end) {
  auto it = endpoints_.find(endpoint_id);
  if (it == endpoints_.end()) return;
  EndpointState& state = it->second;
  --state.inflight;
  // The slot stays leased for the next job; round() gives it back when there is none.
  if (state.hold_until == steady_clock::time_point::max() || stopping_) {
    asio::co_spawn(strand_, workers_.release(endpoint_id, 1), asio::detached);
  } else {
    ++state.held;
  }
  switch (end.verdict) {
    case dispatch::AttemptEnd::Verdict::answered:
      if (state.unreachable_backoff.count() > 0) {
        state.unreachable_backoff = milliseconds(0);
        asio::co_spawn(strand_, workers_.mark_down(endpoint_id, 0, {}), asio::detached);
      }
      break;
    case dispatch::AttemptEnd::Verdict::busy:
      state.hold_until = std::max(state.hold_until, steady_clock::now() + end.hold_off);
      break;
    case dispatch::AttemptEnd::Verdict::unreachable: {
      state.unreachable_backoff =
          std::clamp(state.unreachable_backoff * 2, kUnreachableMin, kUnreachableMax);
      state.hold_until = steady_clock::now() + state.unreachable_backoff;
      state.pool->clear();
      const auto until_ms = store_.now_ms() + state.unreachable_backoff.count();
      asio::co_spawn(strand_, workers_.mark_down(endpoint_id, until_ms, end.error), asio::detached);
      break;
    }
  }
  if (state.inflight == 0 && state.hold_until == steady_clock::time_point::max()) {
    endpoints_.erase(it);  // removed while its last attempts ran
  }
  wakeup_.notify();
}

}  // namespace jq::scheduler
