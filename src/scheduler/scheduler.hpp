// Chooses the next jobs for each worker endpoint with free slots: among the heads of the
// queues it serves (every shard, every name it registered for, paused queues left out), the
// smallest priority, then the one that became ready first; then reserves a batch from that
// queue bounded by the next-best head, so the order holds across shards. Endpoints with fewer
// outstanding requests choose first. Runs on one strand; woken by pushes, finished attempts,
// promotions and registrations (locally or through Redis events), with a slow tick as a net.
//
// The parts: QueueHeads (what this master believes about each queue's head, and the choice),
// NamesWithWork (which names may have jobs, per endpoint), EndpointSlots (in-flight jobs, held
// slots and hold-offs per endpoint), and this class, which
// talks to Redis through the stores, starts attempts and feeds both parts what it learns. The
// clock is injected so the parts' decisions can be tested without waiting. Its members are
// defined in three files: the loop and reservations (scheduler.cpp), jobs reserved ahead of a
// busy endpoint (jobs_ahead.cpp), and pushes that skip the queue (claims.cpp).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

#include "src/dispatch/dispatcher.hpp"
#include "src/events/event.hpp"
#include "src/redis/client.hpp"
#include "src/scheduler/endpoint_slots.hpp"
#include "src/scheduler/names_with_work.hpp"
#include "src/scheduler/queue_heads.hpp"
#include "src/store/direct_dispatch.hpp"
#include "src/store/dispatch_store.hpp"
#include "src/store/queue_store.hpp"
#include "src/util/periodic.hpp"
#include "src/workers/worker_store.hpp"

namespace jq::dispatch {
class TlsContexts;
}

namespace jq::scheduler {

using SteadyClock = std::function<SteadyTime()>;

// Also grants the claims of pushes that may skip the queue (store::DirectDispatch): a free slot
// it holds, for a job no queue it knows of should run before.
class Scheduler : public store::DirectDispatch {
 public:
  Scheduler(
      asio::io_context& io, redis::Client& redis, store::QueueStore& queues,
      store::DispatchStore& store, workers::WorkerStore& workers, dispatch::Dispatcher& dispatcher,
      metrics::Metrics& metrics, std::shared_ptr<dispatch::TlsContexts> tls,
      dispatch::PoolOptions pools, std::chrono::microseconds reserve_ahead,
      SteadyClock clock = [] { return std::chrono::steady_clock::now(); });

  void start() { loop_.start(); }
  void stop();
  void on_event(const events::Event& event);  // any thread

  // Reservations on their way: their jobs are not attempts yet (shutdown waits for both), and
  // whether the loop has ended after stop() (its last step may still send one).
  int reserving() const { return reserving_.load(std::memory_order_relaxed); }
  bool stopped() const { return loop_.done(); }

  bool may_claim() const override { return claimable_.load(std::memory_order_relaxed); }
  asio::awaitable<std::vector<std::optional<store::SlotClaim>>> claim(
      std::vector<store::ClaimWanted> wanted) override;
  void settle(store::SlotClaim claim, std::optional<store::ReservedJob> job) override;

  // Any thread: every endpoint's lease is to be stated again at the next step (this master's
  // heartbeat lapsed: other masters may have dropped its holdings).
  void leases_unsure();

 private:
  // dispatched: jobs started; idle: no ready job for it; full: no slot free across masters;
  // retry: what it knew changed, look again; unavailable: Redis did not answer; reserving: a
  // reservation is on its way, and its answer tells the rest; busy: every slot is taken and
  // nothing more may be reserved ahead.
  enum class Fill { dispatched, idle, full, retry, unavailable, reserving, busy };

  asio::awaitable<Periodic::Duration> step();
  asio::awaitable<void> reload();
  asio::awaitable<void> reload_workers();
  asio::awaitable<bool> round();
  asio::awaitable<Fill> fill(EndpointState& state, int want,
                             const std::vector<EndpointState*>& open);
  asio::awaitable<bool> read_heads(std::vector<store::QueueRef> queues);
  void read_heads_again();
  asio::awaitable<void> read_again(std::vector<QueueHeads::Known> known);
  // The unknown heads of the failing shards, read in the background (one read at a time): a
  // node down on a cluster answers only after the client's retries, and the round's fills do
  // not wait for it. Its shards are failing no more once read.
  void read_failing_shards();
  struct BackgroundRead;
  asio::awaitable<void> read_failing(std::vector<store::QueueRef> queues);
  // Finds and gives back the jobs of reservations whose answer was lost (DispatchStore::reserve).
  void search_lost();
  asio::awaitable<void> give_back_lost();
  Fill reserve(EndpointState& state, const Choice& choice, int slots, int ahead);
  asio::awaitable<void> reserved(std::string endpoint_id, store::QueueRef queue,
                                 store::QueueHead chosen, std::optional<store::QueueHead> bound,
                                 int slots, int ahead);
  void start_ahead(EndpointState& state);
  // Whether jobs reserved or claimed for `state` may wait ahead of it: it is still known and not
  // removed or held off (busy, unreachable), and the master is not stopping.
  bool keeps_ahead(const EndpointState* state);
  void count_ahead(const EndpointState& state);
  void give_back_ahead(EndpointState& state,
                       const std::function<bool(const store::ReservedJob&)>& which = {});
  Periodic::Duration ahead_wait(Periodic::Duration at_most);
  void give_back_jobs(std::vector<store::ReservedJob> jobs);
  void give_back_job(store::ReservedJob job);
  asio::awaitable<void> release_jobs(std::vector<store::ReservedJob> jobs);
  asio::awaitable<void> give_back(EndpointState& state);
  asio::awaitable<void> give_back_all();
  // Gives `n` slots of an endpoint back to Redis; a failed call (the script may or may not have
  // run) leaves the endpoint's lease to be stated again (lease_unsure_).
  asio::awaitable<void> release_slots(std::string endpoint_id, int n);
  // release_slots from a handler that cannot wait for it: counted in releasing_ until the call
  // is sent, so a lease stated meanwhile still counts those slots (the release follows it).
  void spawn_release(std::string endpoint_id, int n);
  asio::awaitable<void> send_release(std::string endpoint_id, int n);
  // States this master's holding of each endpoint in lease_unsure_ as its attempts in flight
  // (setSlots): a lease call's lost answer must not leave slots leased for ever or counted twice.
  asio::awaitable<void> restate_leases();
  void all_leases_unsure();  // on the strand: every endpoint's lease to be stated again
  void on_busy(const events::Event& event);
  void on_pushed(const events::Event& event);
  void finished(const std::string& endpoint_id, const dispatch::AttemptEnd& end);
  void dispatch(EndpointState& state, store::ReservedJob job);
  asio::awaitable<std::vector<std::optional<store::SlotClaim>>> claim_here(
      std::vector<store::ClaimWanted> wanted);
  bool takes_claims(const EndpointState& state, SteadyTime now);
  bool takes_claims_ahead(const EndpointState& state, SteadyTime now, bool none_open);
  bool none_open(SteadyTime now);
  std::optional<store::SlotClaim> claim_one(const store::ClaimWanted& wanted, SteadyTime now);
  void settle_here(store::SlotClaim claim, std::optional<store::ReservedJob> job);
  struct Claim;
  void settle_ahead(const Claim& claim, std::optional<store::ReservedJob> job);
  void update_claimable();
  // Whether `name` may have work: known, not paused, and (known_empty) not known to be empty.
  bool may_have_work(const std::string& name, bool known_empty) const;
  // Tells work_ whether `name` may have work now.
  void recheck_work(const std::string& name);

  asio::io_context& io_;
  redis::Client& redis_;  // only asked whether it is connected
  store::QueueStore& queues_;
  store::DispatchStore& store_;
  workers::WorkerStore& workers_;
  dispatch::Dispatcher& dispatcher_;
  metrics::Metrics& metrics_;
  std::shared_ptr<dispatch::TlsContexts> tls_;  // for the connection pools of https endpoints
  dispatch::PoolOptions pools_;                 // how the endpoints' pools connect
  std::chrono::microseconds reserve_ahead_;     // dispatch.reserve_ahead; zero: none
  SteadyClock clock_;
  std::set<std::string> names_;
  std::set<std::string> paused_;
  NamesWithWork work_;  // follows names_, paused_ and heads_
  QueueHeads heads_;
  EndpointSlots slots_;
  bool stopping_ = false;
  bool redis_lost_ = false;
  std::set<std::string> lease_unsure_;    // endpoints whose lease in Redis may not be ours
  std::map<std::string, int> releasing_;  // slots spawn_release will give back, not yet sent
  bool reload_workers_ = true;
  bool reload_names_ = true;  // job names and paused queues
  int reloads_on_way_ = 0;    // of workers or names: pushes claim nothing meanwhile
  SteadyTime next_refresh_{};
  bool reading_again_ = false;  // read_heads_again's read is on its way
  // Shards whose last head read failed: fills leave their unknown heads to read_failing_shards.
  std::vector<bool> failing_;
  bool reading_failing_ = false;               // read_failing_shards' read is on its way
  bool searching_lost_ = false;                // give_back_lost is on its way
  SteadyTime next_failing_read_{};             // and when the next may start
  int next_shard_ = 0;                         // the shard read_heads_again reads next
  std::vector<std::string> read_again_names_;  // the names it reads, this round of the shards
  // A claim granted and not settled: its endpoint, and whether the job is to wait ahead of it
  // (no slot was free) rather than start on a slot held.
  struct Claim {
    std::string endpoint_id;
    bool ahead = false;
    std::string url;  // ahead: the endpoint's, as it was when the claim was granted
  };
  std::map<std::uint64_t, Claim> claims_;
  std::uint64_t last_claim_ = 0;
  std::atomic<bool> claimable_{false};  // a push may find a slot (update_claimable)
  // Reservations on their way, jobs being given back, and the net's read (read_heads_again).
  std::atomic<int> reserving_{0};
  Periodic loop_;  // last: its step uses everything above
};

}  // namespace jq::scheduler
