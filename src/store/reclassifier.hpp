// Re-matching the jobs that have not started after the constraints changed (contract: "a new
// `match` or `key` (and a new constraint) also applies to jobs already queued or scheduled,
// within 5 s"). Pushes match jobs once; this pass brings the ones stored before a change up to
// date, one shard at a time, one page of record buckets at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "common/expected.hpp"
#include "src/redis/client.hpp"
#include "src/redis/keys.hpp"
#include "src/store/constraint_set.hpp"
#include "src/store/store_error.hpp"

namespace jq::store {

namespace asio = boost::asio;

class Reclassifier {
 public:
  Reclassifier(redis::Client& redis, redis::Keys keys, int shards);

  // Every queued or scheduled job whose stored constraints differ from what `set` matches gets
  // the new ones (reclassifyJobs). Returns how many changed.
  asio::awaitable<Expected<std::int64_t, StoreError>> run(const ConstraintSet& set);

 private:
  asio::awaitable<Expected<std::int64_t, StoreError>> run_shard(const ConstraintSet& set,
                                                                int shard);

  redis::Client& redis_;
  redis::Keys keys_;
  int shards_;
};

}  // namespace jq::store
