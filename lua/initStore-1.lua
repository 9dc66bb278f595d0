--[[ initStore: records the shard count when the data store is created, and reports the
  stored one, so a master started with another `shards` can refuse to run (jobs' ids and keys
  depend on it).
  KEYS[1] meta hash ({shards, created_at_ms, version})
  ARGV[1] shards (integer) this master was started with
  ARGV[2] now (ms since the epoch)
  Returns: the store's shard count (integer); equal to ARGV[1] when the store was just created.
]]
local meta = KEYS[1]
rcall('HSETNX', meta, 'shards', ARGV[1])
rcall('HSETNX', meta, 'created_at_ms', ARGV[2])
rcall('HSETNX', meta, 'version', 1)
return tonumber(rcall('HGET', meta, 'shards'))
