// Chooses the next jobs for each worker endpoint with free slots: among the heads of the
// queues it serves (every shard, every name it registered for, paused queues left out), the
// smallest priority, then the one that became ready first; then reserves a batch from that
// queue bounded by the next-best head, so the order holds across shards. Endpoints with fewer
// outstanding requests choose first. Runs on one strand; woken by pushes, finished attempts,
// promotions and registrations (locally or through Redis events), with a slow tick as a net.
//
// Queue heads are kept in memory, not read on every pass: every script that makes a job ready
// announces it (the queue's head can only get better that way), and every reservation answers
// the queue's head after it. Another master's reservations can make a kept head stale, never
// too late: a reservation that finds less than expected corrects it, and the tick re-reads all.
//
// An endpoint's slots (leased in Redis so its concurrency holds across masters) stay with this
// master between jobs while there is work for it, and are given back once there is none.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

#include "src/dispatch/dispatcher.hpp"
#include "src/events/event.hpp"
#include "src/redis/client.hpp"
#include "src/scheduler/wakeup.hpp"
#include "src/store/dispatch_store.hpp"
#include "src/workers/worker_store.hpp"

namespace jq::scheduler {

class Scheduler {
 public:
  Scheduler(asio::io_context& io, redis::Client& redis, const redis::Keys& keys,
            store::DispatchStore& store, workers::WorkerStore& workers,
            dispatch::Dispatcher& dispatcher);

  void start();
  void stop();
  void on_event(const events::Event& event);  // any thread

 private:
  struct EndpointState {
    std::shared_ptr<const workers::Endpoint> endpoint;
    std::shared_ptr<dispatch::ConnectionPool> pool;
    int inflight = 0;  // attempts of this master
    int held = 0;      // slots leased by this master and not in use
    std::optional<std::chrono::steady_clock::time_point> idle_since;  // no job found for it
    std::chrono::steady_clock::time_point hold_until{};
    std::chrono::milliseconds unreachable_backoff{0};
  };

  // What this master believes about one queue (a name in one shard).
  struct QueueView {
    bool known = false;                    // head is Redis's, plus the announcements since
    std::optional<store::QueueHead> head;  // nullopt: empty
    // While a read or reservation of the queue is on its way, announcements are also kept
    // aside: its answer may predate them, so they are merged into it.
    bool busy = false;
    bool forgotten = false;
    std::optional<store::QueueHead> announced;
  };
  // dispatched: jobs started; idle: no ready job for it; full: no slot free across masters;
  // retry: what it knew changed, look again; unavailable: Redis did not answer.
  enum class Fill { dispatched, idle, full, retry, unavailable };

  asio::awaitable<void> run();
  asio::awaitable<void> reload();
  asio::awaitable<bool> round();
  asio::awaitable<Fill> fill(EndpointState& state, int want);
  asio::awaitable<bool> read_heads(std::vector<store::QueueRef> queues,
                                   std::vector<QueueView*> views);
  asio::awaitable<void> release_idle(EndpointState& state);
  asio::awaitable<void> release_all_held();
  QueueView& view(const std::string& name, int shard);
  void announce(store::QueueHead head);
  void forget(const std::string& name);  // every shard; empty: every name
  static void begin(QueueView& v);
  static void settle(QueueView& v, std::optional<store::QueueHead> fresh);
  void finished(const std::string& endpoint_id, dispatch::AttemptEnd end);
  std::chrono::steady_clock::duration next_wait() const;
  std::optional<int> least_busy_rival(const EndpointState& state,
                                      const std::vector<EndpointState*>& open) const;

  asio::io_context& io_;
  asio::strand<asio::any_io_executor> strand_;
  redis::Client& redis_;
  const redis::Keys& keys_;
  store::DispatchStore& store_;
  workers::WorkerStore& workers_;
  dispatch::Dispatcher& dispatcher_;
  Wakeup wakeup_;
  bool stopping_ = false;
  bool redis_lost_ = false;
  bool reload_workers_ = true;
  bool reload_names_ = true;
  bool reload_paused_ = true;
  std::map<std::string, EndpointState> endpoints_;
  std::set<std::string> names_;
  std::set<std::string> paused_;
  std::map<std::string, std::vector<QueueView>> queues_;  // by name, one per shard
  std::chrono::steady_clock::time_point next_refresh_{};
};

}  // namespace jq::scheduler
