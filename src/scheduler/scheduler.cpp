#include "src/scheduler/scheduler.hpp"

#include <algorithm>

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
constexpr milliseconds kUnreachableMin{250};
constexpr milliseconds kUnreachableMax{30'000};
constexpr std::size_t kMaxIdleConnections = 64;

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
  asio::post(strand_, [this, event] {
    switch (event.kind) {
      case events::EventKind::pushed:
        if (event.arg.empty())
          reload_names_ = true;
        else
          names_.insert(event.arg);
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

asio::awaitable<void> Scheduler::run() {
  while (!stopping_) {
    if (redis_.ready()) {
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
}

// Until the earliest held-off endpoint may take jobs again, at most a tick.
steady_clock::duration Scheduler::next_wait() const {
  const auto now = steady_clock::now();
  steady_clock::duration wait = kTick;
  for (const auto& [id, state] : endpoints_) {
    if (state.hold_until > now && state.hold_until != steady_clock::time_point::max()) {
      wait = std::min<steady_clock::duration>(wait, state.hold_until - now);
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
        if (auto it = endpoints_.find(e.id); it != endpoints_.end()) state = std::move(it->second);
        if (!state.pool || state.endpoint->url != e.url) {
          state.pool = std::make_shared<dispatch::ConnectionPool>(
              io_.get_executor(), e.address.host, e.address.port, kMaxIdleConnections);
        }
        std::string id = e.id;
        state.endpoint = std::make_shared<const workers::Endpoint>(std::move(e));
        next.emplace(std::move(id), std::move(state));
      }
      // Endpoints removed with attempts still running keep counting until those end.
      for (auto& [id, state] : endpoints_) {
        if (!next.contains(id) && state.inflight > 0) {
          state.hold_until = steady_clock::time_point::max();
          next.emplace(id, std::move(state));
        }
      }
      endpoints_ = std::move(next);
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
    if (co_await fill(*state, want) > 0) progress = true;
  }
  co_return progress;
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

// Reserves up to `want` jobs for one endpoint and starts their attempts.
asio::awaitable<int> Scheduler::fill(EndpointState& state, int want) {
  std::vector<store::QueueRef> queues;
  for (const auto& name : names_) {
    if (paused_.contains(name) || !state.endpoint->serves(name)) continue;
    for (int s = 0; s < store_.shards(); ++s) queues.push_back({s, name});
  }
  auto heads = co_await store_.heads(std::move(queues));
  if (!heads || heads->empty()) co_return 0;
  std::sort(heads->begin(), heads->end(),
            [](const store::QueueHead& a, const store::QueueHead& b) { return a.before(b); });
  const std::string endpoint_id = state.endpoint->id;
  auto granted = co_await workers_.acquire(endpoint_id, want, state.endpoint->concurrency);
  if (!granted || *granted == 0) {
    state.hold_until = steady_clock::now() + kFullPause;
    co_return 0;
  }
  const store::QueueHead& best = heads->front();
  std::optional<store::QueueHead> bound;
  int take = *granted;
  if (heads->size() > 1) {
    bound = (*heads)[1];
    // Heads of two shards can tie exactly (retries due at the same moment): take just the
    // chosen head then, since a bound equal to it would exclude it.
    if (!best.before(*bound)) {
      bound.reset();
      take = 1;
    }
  }
  store::QueueRef queue{best.shard, best.name};  // named: g++ 12 mangles braced lists in co_await
  auto jobs = co_await store_.reserve(std::move(queue), take, bound);
  const int reserved = jobs ? static_cast<int>(jobs->size()) : 0;
  if (reserved < *granted) co_await workers_.release(endpoint_id, *granted - reserved);
  if (reserved == 0) co_return 0;
  state.inflight += reserved;
  for (auto& job : *jobs) {
    dispatcher_.start(
        state.endpoint, state.pool, std::move(job), [this, endpoint_id](dispatch::AttemptEnd end) {
          asio::post(strand_, [this, endpoint_id, end] { finished(endpoint_id, end); });
        });
  }
  co_return reserved;
}

void Scheduler::finished(const std::string& endpoint_id, dispatch::AttemptEnd end) {
  auto it = endpoints_.find(endpoint_id);
  if (it == endpoints_.end()) return;
  EndpointState& state = it->second;
  --state.inflight;
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
