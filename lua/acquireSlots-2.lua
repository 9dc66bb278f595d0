#!lua flags=allow-oom
--[[ acquireSlots: a master asks for up to `want` of a worker's concurrency slots. A worker's
  concurrency holds across all masters: each master's holding is a field of the worker's slots
  hash. Holdings of masters whose heartbeat lapsed (they died holding slots) are dropped first,
  so their slots come back; the caller's own holding is never dropped here.
  Memory: runs while Redis is over maxmemory (allow-oom): a lease is a counter in a hash the
          worker already has, and dispatching the jobs already stored is how memory comes back.
  KEYS[1] slots hash of the worker (master id -> slots held)
  KEYS[2] masters zset (master id, score = heartbeat expiry ms)
  ARGV[1] the calling master's id
  ARGV[2] want (>= 0)
  ARGV[3] the worker's concurrency
  ARGV[4] now (ms since the epoch)
  ARGV[5] (optional) the caller's heartbeat ttl (ms): its heartbeat is renewed first, so a
          master never holds slots without one (else a master that just started, before its
          first heartbeat, would have its holding dropped by another master here)
  Returns: the slots granted, 0 .. want (added to the caller's holding).
]]
local slots, masters = KEYS[1], KEYS[2]
local me, want, concurrency = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if ARGV[5] then rcall('ZADD', masters, now + tonumber(ARGV[5]), me) end
local holdings = rcall('HGETALL', slots)
local used = 0
for i = 1, #holdings, 2 do
  local master, held = holdings[i], tonumber(holdings[i + 1])
  local expiry = tonumber(rcall('ZSCORE', masters, master))
  if master ~= me and (not expiry or expiry < now) then
    rcall('HDEL', slots, master)
  else
    used = used + held
  end
end
local grant = math.max(0, math.min(want, concurrency - used))
if grant > 0 then rcall('HINCRBY', slots, me, grant) end
return grant
