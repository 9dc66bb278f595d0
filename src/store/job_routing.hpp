// Which shard a job must be stored in, when it must be a given one.
#pragma once

#include <optional>
#include <string_view>

#include "api/job.hpp"

namespace jq::store {

// The shard of a job with an ordering_key (else a unique_key): every job of one ordering key,
// and every push of one unique key, meets the others in one shard, so one script sees them all
// whichever master runs it. nullopt for a job that may go anywhere. The hash (FNV-1a, 64 bits)
// must be the same on every master: never change it for a store in use.
std::optional<int> routed_shard(const api::NewJob& job, int shards);

// The shard a key hashes to, by the same hash (a schedule's name: its home shard).
int hashed_shard(std::string_view key, int shards);

}  // namespace jq::store
