// The operator's view of the store: queues (one per job name) with their counts and lag, pausing,
// the dead jobs, and the store-wide counters.
//
// A queue is spread over every shard, so each answer gathers all shards in one pipelined round
// trip (two for list() and stats(), which first need the names). Scripts go in the pipeline by
// FCALL; a shard whose Redis lost the script library gets it again and is asked again.
// Reading across shards is not atomic: numbers gathered while jobs move may be off by the jobs
// that moved meanwhile, which an overview can live with.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "api/job_browse.hpp"
#include "common/expected.hpp"
#include "src/redis/client.hpp"
#include "src/redis/keys.hpp"
#include "src/store/job_id.hpp"
#include "src/store/job_store.hpp"
#include "src/store/store_error.hpp"

namespace jq::store {

struct QueueInfo {
  std::string name;
  std::int64_t ready = 0;
  std::int64_t scheduled = 0;
  std::int64_t running = 0;
  std::int64_t dead = 0;
  bool paused = false;
  double lag_seconds = 0;  // age of the oldest ready job; 0 when none is ready
};

struct DeadJob {
  JobId id;
  std::string name;
  int attempts = 0;
  std::int64_t failed_at_ms = 0;
  std::string result;  // the failure object (MessagePack); empty when none was kept
};

struct BrowsedJob {
  JobId id;
  JobRecord record;
};

struct BrowsePage {
  std::vector<BrowsedJob> jobs;
  std::optional<api::BrowseCursor> next;  // none: this was the last page
};

// Counters since the store was created (pushed .. dead) and what is there now (ready .. workers).
struct StoreStats {
  std::int64_t pushed = 0;
  std::int64_t succeeded = 0;
  std::int64_t failed = 0;
  std::int64_t retried = 0;
  std::int64_t dead = 0;
  std::int64_t ready = 0;
  std::int64_t scheduled = 0;
  std::int64_t running = 0;
  std::int64_t workers = 0;
};

class QueueStore {
 public:
  QueueStore(redis::Client& redis, redis::Keys keys, int shards, Clock clock);

  int shards() const { return shards_; }

  // Every job name pushed to any shard, plus the paused names, sorted.
  asio::awaitable<Expected<std::vector<std::string>, StoreError>> names();
  struct Names {
    std::vector<std::string> all;  // sorted, paused ones included
    std::set<std::string> paused;
  };
  // The same and which of them are paused, in one round trip (the scheduler's view). `partial`:
  // on a cluster with a node down, the names its shards hold are left out rather than none
  // given; the paused set must answer.
  asio::awaitable<Expected<Names, StoreError>> load_names(bool partial = false);
  // not_found when the name was never pushed and is not paused.
  asio::awaitable<Expected<QueueInfo, StoreError>> queue(std::string name);
  asio::awaitable<Expected<std::vector<QueueInfo>, StoreError>> list();
  // The counts of exactly these names (in this order; a name without jobs counts 0) in one
  // pipelined round trip; `paused` is not read and stays false. For the metrics scrape.
  asio::awaitable<Expected<std::vector<QueueInfo>, StoreError>> counts(
      std::vector<std::string> names);
  // Marks the name paused (or not) and tells every master; the caller validates the name.
  asio::awaitable<Expected<QueueInfo, StoreError>> pause(std::string name);
  asio::awaitable<Expected<QueueInfo, StoreError>> resume(std::string name);

  // Up to `limit` dead jobs of `name` ("" for any), newest first across shards.
  asio::awaitable<Expected<std::vector<DeadJob>, StoreError>> dead(std::string name, int limit);
  // The dead job is ready again at once with its attempts reset; not_found when it is not dead.
  asio::awaitable<Expected<void, StoreError>> retry_dead(JobId id);
  asio::awaitable<Expected<void, StoreError>> delete_dead(JobId id);

  asio::awaitable<Expected<StoreStats, StoreError>> stats();

  // One page of GET /v1/jobs: each shard's page after the cursor, in one pipelined round trip,
  // merged into the listing's order (src/store/job_browse.cpp).
  asio::awaitable<Expected<BrowsePage, StoreError>> browse(api::JobBrowse query);

  // Whether Redis serves commands now (/readyz): unavailable with the reason when it does not,
  // out_of_memory while it is over its maxmemory (it then refuses new jobs).
  asio::awaitable<Expected<void, StoreError>> ping();

  // Warns when a full Redis would delete keys (a maxmemory-policy other than noeviction), or
  // that the policy could not be read. Never fails: the start goes on either way.
  asio::awaitable<void> check_eviction_policy(redis::Phase phase);

 private:
  using Command = std::vector<std::string>;

  asio::awaitable<Expected<std::vector<redis::Reply>, StoreError>> eval_all(
      std::vector<redis::ScriptCall> calls, std::vector<Command> extra);
  asio::awaitable<Expected<std::vector<redis::Reply>, StoreError>> run(
      std::vector<Command> commands);
  asio::awaitable<Expected<std::vector<QueueInfo>, StoreError>> gather(Names names);
  asio::awaitable<Expected<QueueInfo, StoreError>> set_paused(std::string name, bool paused);
  redis::ScriptCall queue_stats_call(int shard, const std::string& name) const;
  std::int64_t now_us() const;

  redis::Client& redis_;
  redis::Keys keys_;
  int shards_;
  Clock clock_;
};

}  // namespace jq::store
