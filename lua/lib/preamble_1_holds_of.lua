-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ The keys a shard keeps for its jobs held back by constraints, below its prefix <p>:{s}:c:
  (src/redis/keys.hpp; docs/REDIS.md, "Per shard"). A pair is one key of one constraint,
  "<name>#<key>" (a name cannot hold '#').
  held     held:<pair>: zset, the pair's jobs held in this shard, field -> ready stamp (µs), so
           the oldest wakes first and a younger job of the pair waits behind them
  waiting  waiting:<name>: hash, key -> the constraint's jobs held here (GET /v1/constraints
           sums it over the shards)
  tallies  hash, waiting:<name> -> the constraint's jobs held here, deferred:<name> -> holds
           counted here (/metrics sums both over the shards)
  settled  hash, pair -> jobs admitJobs refused that holdJobs settled here (held, or found
           stale) since unholdJobs last woke the pair here; ackWake compares it with the
           refusals {c} counted (lua/ackWake-2.lua)
]]
local function holds_of(prefix)
  return {held = prefix .. 'held:', waiting = prefix .. 'waiting:', tallies = prefix .. 'tallies',
          settled = prefix .. 'settled'}
end
