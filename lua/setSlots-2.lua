#!lua flags=allow-oom
--[[ setSlots: a master states how many of a worker's slots it holds, as a number rather than a
  change (acquireSlots and releaseSlots add and subtract). It puts the holding right after a call
  whose answer was lost (acquireSlots may have granted, releaseSlots may have given back: a
  change repeated or forgotten would leave slots leased for ever or counted twice) and after a
  time away from Redis (another master may have dropped the holding as lapsed while attempts of
  this master still ran). The caller's heartbeat is renewed first, as acquireSlots does.
  Memory: runs while Redis is over maxmemory (allow-oom): it sets or deletes a counter.
  KEYS[1] slots hash of the worker (master id -> slots held)
  KEYS[2] masters zset (master id, score = heartbeat expiry ms)
  ARGV[1] the master's id
  ARGV[2] the slots it holds (0 deletes its field)
  ARGV[3] now (ms since the epoch)
  ARGV[4] the master's heartbeat ttl (ms)
  Returns: the slots it holds now.
]]
local slots, masters, me, held = KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2])
rcall('ZADD', masters, tonumber(ARGV[3]) + tonumber(ARGV[4]), me)
if held <= 0 then
  rcall('HDEL', slots, me)
  return 0
end
rcall('HSET', slots, me, held)
return held
