#!lua flags=allow-oom
--[[ ackWake: what unholdJobs found in one shard, back under {c} (lua/lib/preamble_4_ack_wake.lua
  says what it does with it): the pair's held_shards entry for that shard is brought up to date,
  and what the order could not use is handed to the shards after it. Every master may ack at
  once; an ack that comes twice, late or not at all is harmless.
  Memory: runs while Redis is over maxmemory (allow-oom): it updates or removes entries.
  KEYS[1] constraint defs: the definitions hash (name -> MessagePack)
  KEYS[2] constraint state prefix (lua/lib/preamble_1_constraint_context.lua)
  ARGV[1] now (ms since the epoch)
  ARGV[2] the constraint's name
  ARGV[3] the key (the pair is name#key)
  ARGV[4] the shard the order went to
  ARGV[5] n: how many the order asked for
  ARGV[6] woken: how many unholdJobs made ready
  ARGV[7] oldest: the ready stamp (µs) of the oldest job the pair still holds in the shard, -1
          for none
  ARGV[8] settled: the refused jobs holdJobs settled in the shard since its last wake
  ARGV[9] at: when unholdJobs ran (µs, the shard node's clock)
  ARGV[10] events channel ({c}): "s <due_ms>" when the pair is due again
  Returns: more wake orders, five values each: name, key, shard, n, bound (-1: none).
]]
local cx = constraint_context(KEYS[1], KEYS[2], tonumber(ARGV[1]))
local out = {}
ack_wake(cx, ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7],
         tonumber(ARGV[8]), tonumber(ARGV[9]), ARGV[10], out)
return out
