#include "src/scheduler/scheduler.hpp"

#include <algorithm>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

namespace jq::scheduler {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kTick{1000};  // the safety net when nothing wakes us
// About how many queues the net reads again at once (read_heads_again).
constexpr std::size_t kReadAgainQueues = 256;

bool same(const store::QueueHead& a, const store::QueueHead& b) {
  return a.priority == b.priority && a.member == b.member;
}

}  // namespace

Scheduler::Scheduler(asio::io_context& io, redis::Client& redis, store::QueueStore& queues,
                     store::DispatchStore& store, workers::WorkerStore& workers,
                     dispatch::Dispatcher& dispatcher, metrics::Metrics& metrics,
                     std::shared_ptr<dispatch::TlsContexts> tls, dispatch::PoolOptions pools,
                     std::chrono::microseconds reserve_ahead, SteadyClock clock)
    : io_(io),
      redis_(redis),
      queues_(queues),
      store_(store),
      workers_(workers),
      dispatcher_(dispatcher),
      metrics_(metrics),
      tls_(std::move(tls)),
      pools_(pools),
      reserve_ahead_(reserve_ahead),
      clock_(std::move(clock)),
      heads_(store.shards(),
             [this](const std::string& name, bool known_empty) {
               work_.set(name, may_have_work(name, known_empty));
             }),
      failing_(static_cast<std::size_t>(store.shards()), false),
      loop_(
          io.get_executor(), "scheduler", [this] { return step(); },
          // Slots kept for the next job go back now rather than when this master's heartbeat
          // lapses.
          [this] { return give_back_all(); }) {}

void Scheduler::stop() {
  asio::post(loop_.strand(), [this] {
    stopping_ = true;
    claimable_.store(false, std::memory_order_relaxed);
  });
  loop_.stop();
}

void Scheduler::on_event(const events::Event& event) {
  // Results and retries are the waiters' and the promoter's business: not worth a post.
  if (event.kind == events::EventKind::result || event.kind == events::EventKind::scheduled) {
    return;
  }
  asio::post(loop_.strand(), [this, event] {
    switch (event.kind) {
      case events::EventKind::pushed:
        on_pushed(event);
        break;
      case events::EventKind::workers:
        reload_workers_ = true;
        break;
      case events::EventKind::paused:
        reload_names_ = true;
        break;
      case events::EventKind::busy:
        on_busy(event);
        break;
      default:
        return;
    }
    loop_.poke();
  });
}

// "b <worker id> <until_ms>": a master got a busy answer from the endpoint; this one holds it back
// until then too (its own announcement included: the same hold), and gives back what it had
// reserved ahead for it.
void Scheduler::on_busy(const events::Event& event) {
  const std::int64_t left_ms = event.until_ms - store_.now_ms();
  EndpointState* state = slots_.find(event.arg);
  if (state == nullptr || left_ms <= 0) return;
  state->hold_until = std::max(state->hold_until, clock_() + std::chrono::milliseconds(left_ms));
  give_back_ahead(*state);
  update_claimable();
}

// "p <name> <shard> <priority> <member>": the queue's head may be this job now. Without a usable
// head (or a name), what the announcement concerns is read again.
void Scheduler::on_pushed(const events::Event& event) {
  if (event.arg.empty()) {
    reload_names_ = true;
    heads_.forget_all();
    return;
  }
  if (names_.insert(event.arg).second) recheck_work(event.arg);
  if (event.head && event.head->shard >= 0 && event.head->shard < heads_.shards()) {
    heads_.announce(
        store::QueueHead{event.head->shard, event.arg, event.head->priority, event.head->member});
  } else {
    heads_.forget(event.arg);
  }
}

bool Scheduler::may_have_work(const std::string& name, bool known_empty) const {
  return !known_empty && names_.contains(name) && !paused_.contains(name);
}

void Scheduler::recheck_work(const std::string& name) {
  work_.set(name, may_have_work(name, heads_.known_empty(name)));
}

// Rounds until one learns nothing new; then sleeps until an endpoint opens, held slots linger
// out, an event pokes the loop, or the tick (which reads the heads again, as a net).
asio::awaitable<Periodic::Duration> Scheduler::step() {
  if (!redis_.ready()) {
    redis_lost_ = true;
    co_return slots_.next_wait(clock_(), false, kTick);
  }
  if (std::exchange(redis_lost_, false)) {
    heads_.forget_all();  // what Redis holds now is read afresh
    std::fill(failing_.begin(), failing_.end(), false);
    co_await give_back_all();
    // Away long enough, this master's heartbeat lapsed and another may have dropped its
    // holdings while its attempts still ran: say them again.
    all_leases_unsure();
  }
  if (!lease_unsure_.empty()) co_await restate_leases();
  if (!searching_lost_ && !stopping_ && store_.reservations_lost()) search_lost();
  if (clock_() >= next_refresh_ && !reading_again_) read_heads_again();
  // Jobs ahead first: a slot held takes one before any other, and those due go back.
  for (auto& [id, state] : slots_.all()) start_ahead(state);
  // Reload before every round: events that arrive mid-pass must count in the next one. (Not
  // `do ... while (!stopping_ && co_await round())`: g++ 12 miscompiles a co_await inside `&&`
  // in a loop condition of a coroutine that returns a value; it traps at run time.)
  for (;;) {
    co_await reload();
    if (stopping_) break;
    const bool progress = co_await round();
    if (!progress) break;
  }
  if (!reading_failing_ && !stopping_ && clock_() >= next_failing_read_) read_failing_shards();
  update_claimable();
  // While a read is on its way, its answer pokes the loop. Whole milliseconds, rounded up:
  // ahead_wait() counts in them, and a wait cut short would wake the loop before the read is
  // due, to wait 0 ms again and again until it is.
  const auto until_refresh =
      reading_again_ ? milliseconds(kTick)
                     : std::clamp(std::chrono::ceil<milliseconds>(next_refresh_ - clock_()),
                                  milliseconds::zero(), kTick);
  co_return std::min(slots_.next_wait(clock_(), redis_.ready(), until_refresh),
                     ahead_wait(until_refresh));
}

// After Redis was away, slots held may no longer be ours (other masters drop the holdings of a
// master whose heartbeat lapsed): give them back and lease afresh, rather than trust them.
asio::awaitable<void> Scheduler::give_back_all() {
  std::vector<store::ReservedJob> ahead;
  for (auto& [id, state] : slots_.all()) {
    EndpointSlots::take_ahead(state, ahead);
    if (!state.removed) count_ahead(state);
  }
  co_await release_jobs(std::move(ahead));
  for (auto& [id, state] : slots_.all()) co_await give_back(state);
}

asio::awaitable<void> Scheduler::give_back(EndpointState& state) {
  const int held = EndpointSlots::take_held(state);
  if (held > 0) co_await release_slots(state.endpoint->id, held);
}

asio::awaitable<void> Scheduler::release_slots(std::string endpoint_id, int n) {
  // The result in a variable: g++ 12 compiled `if (!co_await ...)` here into a loop that never
  // ended (the master spun at 100 % CPU).
  const auto released = co_await workers_.release(endpoint_id, n);
  if (!released) lease_unsure_.insert(endpoint_id);
}

void Scheduler::leases_unsure() {
  asio::post(loop_.strand(), [this] {
    all_leases_unsure();
    loop_.poke();
  });
}

void Scheduler::all_leases_unsure() {
  for (const auto& [id, state] : slots_.all()) lease_unsure_.insert(id);
}

void Scheduler::spawn_release(std::string endpoint_id, int n) {
  releasing_[endpoint_id] += n;
  asio::co_spawn(loop_.strand(), send_release(std::move(endpoint_id), n), asio::detached);
}

asio::awaitable<void> Scheduler::send_release(std::string endpoint_id, int n) {
  if (const auto it = releasing_.find(endpoint_id); it != releasing_.end()) {
    it->second -= n;
    if (it->second <= 0) releasing_.erase(it);
  }
  co_await release_slots(std::move(endpoint_id), n);
}

asio::awaitable<void> Scheduler::restate_leases() {
  const std::set<std::string> unsure = std::exchange(lease_unsure_, {});
  for (const std::string& id : unsure) {
    int holding = 0;
    if (EndpointState* state = slots_.find(id); state && !state->removed) {
      // Unused slots are leased again when needed, against every master's holdings.
      EndpointSlots::take_held(*state);
      holding = state->inflight;
    }
    // Slots whose release is on its way go back after this statement: it must count them.
    if (const auto it = releasing_.find(id); it != releasing_.end()) holding += it->second;
    const auto stated = co_await workers_.set_slots(id, holding);
    if (!stated) lease_unsure_.insert(id);
  }
}

// Registrations, job names and paused queues, when an event said they changed.
asio::awaitable<void> Scheduler::reload() {
  if (reload_workers_) co_await reload_workers();
  if (reload_names_) {
    // Cleared before the read: an event that comes while it is on its way asks for another.
    // Pushes claim nothing until it is in (claim_here): a pause just answered must hold.
    reload_names_ = false;
    ++reloads_on_way_;
    // With a node down, the names of the other shards: its own come when its events channels
    // are heard again (the subscriber's look_again, a reload).
    auto loaded = co_await queues_.load_names(true);
    --reloads_on_way_;
    if (!loaded) reload_names_ = true;
    if (loaded) {
      names_.insert(loaded->all.begin(), loaded->all.end());
      paused_ = std::move(loaded->paused);
      for (const std::string& name : names_) recheck_work(name);
      // Jobs of a queue paused now go back to it, not to a worker.
      for (auto& [id, state] : slots_.all()) {
        give_back_ahead(state, [this](const store::ReservedJob& job) {
          return paused_.contains(job.record->name);
        });
      }
    }
  }
}

asio::awaitable<void> Scheduler::reload_workers() {
  // Cleared before the read: an event that comes while it is on its way asks for another.
  // Pushes claim nothing until it is in (claim_here).
  reload_workers_ = false;
  ++reloads_on_way_;
  auto loaded = co_await workers_.load_all();
  --reloads_on_way_;
  if (!loaded) {
    reload_workers_ = true;
    co_return;
  }
  // The endpoints with jobs ahead now: the update may leave them with none, or forget them.
  std::vector<std::pair<std::string, std::string>> had_ahead;  // id, url
  for (const auto& [id, state] : slots_.all()) {
    if (!state.ahead.empty()) had_ahead.emplace_back(id, state.endpoint->url);
  }
  std::vector<std::string> heirs;
  auto gone = slots_.update(
      std::move(*loaded),
      [this](const workers::Endpoint& e) {
        return std::make_shared<dispatch::ConnectionPool>(io_.get_executor(), e.address, tls_,
                                                          e.ca_file, e.concurrency, pools_);
      },
      &heirs);
  // Removed endpoints take no jobs: none of their names counts.
  std::vector<std::shared_ptr<const workers::Endpoint>> endpoints;
  for (const auto& [id, state] : slots_.all()) {
    if (!state.removed) endpoints.push_back(state.endpoint);
  }
  work_.endpoints(std::move(endpoints));
  give_back_jobs(std::move(gone.jobs));
  for (const auto& [id, url] : had_ahead) {
    const EndpointState* state = slots_.find(id);
    metrics_.worker(url).reserved_ahead.set(state ? static_cast<double>(state->ahead.size()) : 0);
  }
  // The attempts they took in from a registration of their url that lapsed are leased nowhere
  // (its slots went with it): said first, as other masters may lease those slots from now on.
  if (!heirs.empty()) {
    lease_unsure_.insert(heirs.begin(), heirs.end());
    co_await restate_leases();
  }
  for (auto& [id, held] : gone.slots) co_await release_slots(id, held);
}

// One pass over the endpoints with free slots, fewest outstanding first. True when what it knew
// changed on the way (so another pass may find more); reservations sent in it poke the loop
// when they are answered.
asio::awaitable<bool> Scheduler::round() {
  const SteadyTime now = clock_();
  const std::vector<EndpointState*> open = slots_.open(now, reserve_ahead_);
  bool progress = false;
  for (EndpointState* state : open) {
    if (stopping_) break;
    if (state->reserving >= kReservationsInFlight) continue;
    // No name of it may have work: nothing to reserve, nor to keep ahead (asked first, as
    // want() compares it with every open rival).
    if (work_.count(*state->endpoint) == 0) {
      if (state->open(now)) slots_.found_none(*state, now);  // want() > 0: a free slot
      continue;
    }
    const int want = EndpointSlots::want(*state, open);
    const Fill result = co_await fill(*state, want, open);
    if (result == Fill::retry) progress = true;
    // Idle only with a free slot: one busy throughout, finding nothing to keep ahead, is not.
    if (result == Fill::idle && want > 0) slots_.found_none(*state, now);
  }
  // Held-off endpoints keep no slots they cannot use; idle ones keep them a little while.
  for (EndpointState* state : slots_.releasable(now)) co_await give_back(*state);
  // Heads settled in this pass: pushes may claim again without waiting for the step's end.
  update_claimable();
  co_return progress;
}

// The net for announcements that never came (missed while the subscriber reconnected, say):
// the known heads of every queue of `shard` an open endpoint serves are read again (one call),
// and those found are announced. What is known stays known meanwhile, and the loop does not wait
// for the read, so claims, choices and reservations go on. Shutdown waits for it as for a
// reservation. A queue that a reservation (or another read) has begun on since keeps what that
// newer answer says: the read may predate a job it took. Forgetting every head instead (until
// 1711c16) stopped every claim until the heads were read again; with jobs spread over 300 names,
// reservations one queue at a time then fell behind the pushes for milliseconds each second (row
// d's p99, docs/BENCHMARKS.md).
void Scheduler::read_heads_again() {
  // The names are taken at the start of each round of the shards: those of every endpoint,
  // busy ones included (a queue believed empty is not read otherwise).
  const std::vector<std::string>& names = read_again_names_;
  if (next_shard_ == 0) read_again_names_ = work_.served(names_, paused_);
  // A few shards at a time, each once per tick, about kReadAgainQueues queues per read: a read
  // of every shard at once (16 calls in one pipeline) held Redis, and every job behind it, for
  // milliseconds with 300 names; with few names one read a tick is enough, and the loop wakes
  // no more often than that.
  const int shards = heads_.shards();
  const int per_read = static_cast<int>(
      std::clamp<std::size_t>(kReadAgainQueues / std::max<std::size_t>(names.size(), 1), 1,
                              static_cast<std::size_t>(shards)));
  std::vector<QueueHeads::Known> known;
  for (int i = 0; i < per_read && next_shard_ < shards; ++i, ++next_shard_) {
    auto more = heads_.known(names, next_shard_);
    known.insert(known.end(), std::make_move_iterator(more.begin()),
                 std::make_move_iterator(more.end()));
  }
  if (next_shard_ >= shards) next_shard_ = 0;
  next_refresh_ = clock_() + kTick * per_read / shards;
  if (known.empty()) return;
  reading_again_ = true;
  reserving_.fetch_add(1, std::memory_order_relaxed);
  asio::co_spawn(loop_.strand(), read_again(std::move(known)), asio::detached);
}

// A read of heads (or a search for lost reservations) in the background ends: its flag is
// cleared, shutdown no longer waits for it, and the loop uses what it found.
struct Scheduler::BackgroundRead {
  Scheduler& scheduler;
  bool& on_way;
  ~BackgroundRead() {
    on_way = false;
    scheduler.reserving_.fetch_sub(1, std::memory_order_relaxed);
    try {
      scheduler.loop_.poke();
    } catch (...) {
    }
  }
};

// Jobs taken in Redis by reservations (or pushes) whose answer never came, and sent to no worker,
// are looked for and given back in the background (a search pages through running jobs); the next
// search starts once they are back, so none is given back twice.
void Scheduler::search_lost() {
  searching_lost_ = true;
  reserving_.fetch_add(1, std::memory_order_relaxed);
  asio::co_spawn(loop_.strand(), give_back_lost(), asio::detached);
}

asio::awaitable<void> Scheduler::give_back_lost() {
  BackgroundRead done{*this, searching_lost_};
  std::vector<store::ReservedJob> found = co_await store_.find_lost_reservations();
  if (found.empty()) co_return;
  spdlog::warn(
      "{} job(s) taken by reservations (or pushes taking them at once) whose answer was lost go "
      "back to their queues, their attempt not counted",
      found.size());
  co_await release_jobs(std::move(found));
}

asio::awaitable<void> Scheduler::read_again(std::vector<QueueHeads::Known> known) {
  BackgroundRead done{*this, reading_again_};
  std::vector<store::QueueRef> queues;
  queues.reserve(known.size());
  for (const QueueHeads::Known& k : known) queues.push_back(k.queue);
  std::vector<store::DispatchStore::HeadRead> read = co_await store_.heads(std::move(queues));
  for (std::size_t i = 0; i < known.size() && i < read.size(); ++i) {
    if (read[i]) heads_.read_again(known[i], std::move(*read[i]));  // else: the next tick
  }
}

void Scheduler::read_failing_shards() {
  if (std::find(failing_.begin(), failing_.end(), true) == failing_.end()) return;
  std::vector<store::QueueRef> queues;
  for (store::QueueRef& q : heads_.unknown(work_.served(names_, paused_))) {
    if (failing_[static_cast<std::size_t>(q.shard)]) queues.push_back(std::move(q));
  }
  if (queues.empty()) {  // nothing left to read there (its names went, or were read)
    std::fill(failing_.begin(), failing_.end(), false);
    return;
  }
  reading_failing_ = true;
  next_failing_read_ = clock_() + kTick / 2;  // a read that fails at once does not spin
  reserving_.fetch_add(1, std::memory_order_relaxed);
  asio::co_spawn(loop_.strand(), read_failing(std::move(queues)), asio::detached);
}

asio::awaitable<void> Scheduler::read_failing(std::vector<store::QueueRef> queues) {
  BackgroundRead done{*this, reading_failing_};
  co_await read_heads(std::move(queues));
}

// Reads the heads of the given queues in one pipelined round trip. False when Redis did not
// answer (they stay unknown).
asio::awaitable<bool> Scheduler::read_heads(std::vector<store::QueueRef> queues) {
  if (queues.empty()) co_return true;
  for (const auto& q : queues) heads_.begin(q);
  std::vector<store::DispatchStore::HeadRead> read;
  try {
    read = co_await store_.heads(queues);
  } catch (...) {
    for (const auto& q : queues) heads_.fail(q);  // never left busy: it would never be read
    throw;
  }
  // A shard read is all or nothing: failed (its queues stay unknown), or read, and no longer
  // failing.
  bool all = true;
  for (std::size_t i = 0; i < queues.size(); ++i) {
    const auto shard = static_cast<std::size_t>(queues[i].shard);
    if (i >= read.size() || !read[i]) {
      heads_.fail(queues[i]);
      failing_[shard] = redis_.cluster();  // one Redis answers all shards or none
      all = false;
    } else {
      heads_.settle(queues[i], std::move(*read[i]));
      failing_[shard] = false;
    }
  }
  co_return all;
}

// Reserves up to `want` jobs for one endpoint and starts their attempts, and while all its slots
// are taken, jobs to keep ahead of them.
asio::awaitable<Scheduler::Fill> Scheduler::fill(EndpointState& state, int want,
                                                 const std::vector<EndpointState*>& open) {
  if (want <= 0 && EndpointSlots::ahead(state, 0, open, reserve_ahead_, clock_()) <= 0) {
    co_return Fill::busy;
  }
  // Names known to be empty would add nothing below: no head to read or choose, none busy.
  // round() passes over an endpoint with none left.
  const std::vector<std::string> names = work_.names(*state.endpoint);
  // The heads of failing shards are read in the background (read_failing_shards); the jobs of
  // the others go on, by their heads (on a cluster with a node down, only its shards wait).
  std::vector<store::QueueRef> unknown = heads_.unknown(names);
  std::erase_if(unknown, [this](const store::QueueRef& q) {
    return failing_[static_cast<std::size_t>(q.shard)];
  });
  const bool read = co_await read_heads(std::move(unknown));
  const auto first = heads_.choose(names);
  if (!first) {
    if (!read) co_return Fill::unavailable;
    co_return heads_.busy(names) ? Fill::reserving : Fill::idle;
  }
  // Jobs enough for every endpoint that could take them: no need to share them out (a backlog
  // with several endpoints then goes in reservations of all their free slots, not of one or two).
  if (const int room = EndpointSlots::room(state);
      want > 0 && want < room && first->spare >= room + EndpointSlots::rivals_room(state, open)) {
    want = room;
  }
  if (state.held < want) {
    auto granted = co_await workers_.acquire(state.endpoint->id, want - state.held,
                                             state.endpoint->concurrency);
    if (granted) {
      state.held += *granted;
    } else {
      lease_unsure_.insert(state.endpoint->id);  // granted or not: stated at the next step
    }
  }
  if (want > 0 && state.held == 0) {
    slots_.full(state, clock_());
    co_return Fill::full;
  }
  const int slots = std::min(state.held, want);
  const int ahead = EndpointSlots::ahead(state, slots, open, reserve_ahead_, clock_());
  if (slots + ahead == 0) co_return Fill::busy;
  // Heads may have changed while the slots were leased: choose again.
  const auto choice = heads_.choose(names);
  if (!choice) co_return Fill::retry;
  if (stopping_) co_return Fill::retry;  // the step ends; its finish gives the slots back
  co_return reserve(state, *choice, slots, ahead);
}

// Sends the reservation and returns at once: the slots it may fill count as started until its
// answer says how many jobs came. Meanwhile the loop goes on, and slots freed since ask for
// theirs without waiting for it, even from the same queue (Redis runs the calls one after the
// other, each taking from the front within its bound).
Scheduler::Fill Scheduler::reserve(EndpointState& state, const Choice& choice, int slots,
                                   int ahead) {
  const store::QueueRef queue{choice.head.shard, choice.head.name};
  if (choice.head_only) {
    slots = std::min(slots, 1);
    ahead = slots > 0 ? 0 : std::min(ahead, 1);
  }
  // Made first: nothing below throws, so the queue and the slots are marked only when the
  // answer will settle them.
  auto answer = reserved(state.endpoint->id, queue, choice.head, choice.bound, slots, ahead);
  heads_.begin(queue, slots + ahead);
  slots_.started(state, slots);
  state.ahead_coming += ahead;
  ++state.reserving;
  reserving_.fetch_add(1, std::memory_order_relaxed);
  asio::co_spawn(loop_.strand(), std::move(answer), asio::detached);
  return Fill::reserving;
}

// The answer of a reservation, on the strand: its jobs start, the slots it did not fill are
// held again, and the loop looks again at what it learned.
asio::awaitable<void> Scheduler::reserved(std::string endpoint_id, store::QueueRef queue,
                                          store::QueueHead chosen,
                                          std::optional<store::QueueHead> bound, int slots,
                                          int ahead) {
  // Whatever happens below, shutdown stops waiting for this answer and the loop looks again.
  struct Answered {
    Scheduler& scheduler;
    ~Answered() {
      scheduler.reserving_.fetch_sub(1, std::memory_order_relaxed);
      try {
        scheduler.loop_.poke();
      } catch (...) {
      }
    }
  } answered{*this};
  Expected<store::Reservation, store::StoreError> reservation = store::Reservation{};
  try {
    reservation = co_await store_.reserve(queue, slots + ahead, std::move(bound));
  } catch (const std::exception& e) {
    // Nothing else hears of this answer: the queue's head and the slots settle here, whatever.
    reservation = unexpected(store::StoreError::internal(e.what()));
  } catch (...) {
    reservation = unexpected(store::StoreError::internal("reserving jobs failed"));
  }
  Fill result = Fill::unavailable;
  std::vector<store::ReservedJob> jobs;
  if (!reservation) {
    heads_.fail(queue, slots + ahead);  // never left busy: it would never be chosen again
  } else {
    const bool moved = !reservation->head || !same(*reservation->head, chosen);
    heads_.settle(queue, std::move(reservation->head), {slots + ahead, reservation->ready});
    jobs = std::move(reservation->jobs);
    result = !jobs.empty() ? Fill::dispatched : moved ? Fill::retry : Fill::idle;
  }
  // The slots started keep the endpoint known (a removed one too) until now.
  EndpointState* state = slots_.find(endpoint_id);
  // Answered after stop, or for an endpoint deregistered or held off (busy, unreachable)
  // meanwhile (or, never expected, no longer known): the jobs go back to their queues, their
  // attempt not counted, rather than start while the master shuts down or wait for a worker
  // that left or refused (another endpoint or master, or this one later, runs them).
  std::vector<store::ReservedJob> back;
  if (!keeps_ahead(state)) {
    std::swap(back, jobs);
  } else {
    // Registered again meanwhile for other names: what it no longer serves goes back too.
    std::vector<store::ReservedJob> served;
    for (store::ReservedJob& job : jobs) {
      (state->serves(job.record->name) ? served : back).push_back(std::move(job));
    }
    jobs = std::move(served);
  }
  if (state) {
    --state->reserving;
    state->ahead_coming -= ahead;
    if (result == Fill::dispatched) slots_.found_work(*state);
    if (result == Fill::idle && slots > 0) slots_.found_none(*state, clock_());
    // In the order reserved, behind those reserved ahead before: the slots this reservation
    // counted are held again and take them from the front.
    for (auto& job : jobs) state->ahead.push_back(std::move(job));
  }
  const std::string holder = slots_.lease_holder(endpoint_id);
  const int give_back = slots_.unused(endpoint_id, slots, stopping_);
  if (EndpointState* still = slots_.find(endpoint_id); still && !still->removed) {
    start_ahead(*still);
    count_ahead(*still);
  }
  slots_.forget_if_gone(endpoint_id);
  give_back_jobs(std::move(back));
  if (give_back > 0) co_await release_slots(holder, give_back);
  update_claimable();
}

void Scheduler::dispatch(EndpointState& state, store::ReservedJob job) {
  dispatcher_.start(state.endpoint, state.pool, std::move(job),
                    [this, endpoint_id = state.endpoint->id](dispatch::AttemptEnd end) {
                      asio::post(loop_.strand(),
                                 [this, endpoint_id, end] { finished(endpoint_id, end); });
                    });
}

void Scheduler::finished(const std::string& attempt_endpoint_id, const dispatch::AttemptEnd& end) {
  const auto follow = slots_.finished(attempt_endpoint_id, end, clock_(), stopping_);
  if (!follow) return;
  // Registered again under a new id while the attempt ran: what it leaves is the new one's.
  const std::string& endpoint_id = follow->heir.empty() ? attempt_endpoint_id : follow->heir;
  if (follow->release_slot) {
    spawn_release(endpoint_id, 1);
  }
  if (follow->mark_up) {
    asio::co_spawn(loop_.strand(), workers_.mark_down(endpoint_id, 0, {}), asio::detached);
  }
  if (follow->clear_connections) follow->clear_connections->clear();
  if (EndpointState* state = slots_.find(endpoint_id)) {
    // Held off: what it had ahead goes back for others to run; else its next job starts now.
    if (follow->mark_busy || follow->mark_down) {
      give_back_ahead(*state);
    } else {
      start_ahead(*state);
    }
  }
  update_claimable();
  // A busy mark was written and announced by the dispatcher, before the job went back.
  if (follow->mark_down) {
    const auto until_ms = store_.now_ms() + follow->mark_down->count();
    asio::co_spawn(loop_.strand(), workers_.mark_down(endpoint_id, until_ms, end.error),
                   asio::detached);
  }
  loop_.poke();
}

}  // namespace jq::scheduler
