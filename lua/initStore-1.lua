#!lua flags=allow-oom
--[[ initStore: records the shard count and the data layout when the data store is created, and
  reports the stored ones, so a master started with another `shards`, or built for another
  layout of the keys, can refuse to run (jobs' ids and keys depend on both).
  Memory: runs while Redis is over maxmemory (allow-oom): it writes a few bytes of metadata once,
          when the store is new, and runs at every connect: a master must be able to start against
          a full Redis.
  KEYS[1] meta hash ({shards, created_at_ms, version})
  ARGV[1] shards (integer) this master was started with
  ARGV[2] now (ms since the epoch)
  ARGV[3] the layout version this master reads and writes (src/redis/keys.hpp)
  Returns: {shards, version} of the store; equal to ARGV[1] and ARGV[3] when it was just created.
]]
local meta = KEYS[1]
rcall('HSETNX', meta, 'shards', ARGV[1])
rcall('HSETNX', meta, 'created_at_ms', ARGV[2])
rcall('HSETNX', meta, 'version', ARGV[3])
local stored = rcall('HMGET', meta, 'shards', 'version')
return {tonumber(stored[1]), tonumber(stored[2])}
