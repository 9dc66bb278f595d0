#!lua flags=allow-oom
--[[ wakeConstraints: lets jobs held back by constraints try again when their pair's time comes,
  without anyone polling: wake_due holds, per pair, when to look at it again. Promoters call this
  at the due times announced ("s <due_ms>", a rate's next start: admitJobs) and at the earliest
  one it returns; the master that changed or removed a constraint calls it at once
  (updateConstraint and removeConstraint put the constraint's held pairs in wake_due, due now).
  A due pair with held jobs gets wake orders for as many as may start now (lua/lib/
  preamble_3_room.lua; a removed constraint: all of them), or is put back for when one may; a
  pair that holds nothing any more leaves. The other entries repair hand-offs a master never
  finished: a lease whose release was lost (due at its deadline) and a wake order never acked
  (due HANDOFF_MS after it was given).
  Memory: runs while Redis is over maxmemory (allow-oom): it removes or moves entries; held jobs
          move to their ready lists (unholdJobs).
  KEYS[1] constraint defs: the definitions hash (name -> MessagePack)
  KEYS[2] constraint state prefix (lua/lib/preamble_1_constraint_context.lua)
  KEYS[3] jobs prefix of shard 0, one Redis only: the orders run here, as in releaseLeases-5
  KEYS[4] ready prefix of shard 0; with KEYS[3]
  KEYS[5] held prefix of shard 0; with KEYS[3]
  ARGV[1] now (ms since the epoch)
  ARGV[2] max: the most pairs to look at in this call
  ARGV[3] events channel of shard 0, with KEYS[3]
  ARGV[4] constraint channel: the {c} events channel, with KEYS[3]
  Returns: {next_due, name, key, shard, n, bound, ...}: the earliest due time left in wake_due
           (ms; -1 for none; at most now when more pairs were due than max, or when the orders
           given were more than one call runs), then the wake orders, five values each (bound
           -1: none); none when the shards' keys were given (they ran here).
]]
local cx = constraint_context(KEYS[1], KEYS[2], tonumber(ARGV[1]), KEYS[3] ~= nil)
local wake_due = cx.c .. 'wake_due'
local orders = {}
for _, ck in ipairs(rcall('ZRANGEBYSCORE', wake_due, '-inf', cx.now, 'LIMIT', '0', ARGV[2])) do
  rcall('ZREM', wake_due, ck)
  local hash = string.find(ck, '#', 1, true)
  local name, key = string.sub(ck, 1, hash - 1), string.sub(ck, hash + 1)
  if rcall('EXISTS', cx.c .. 'held_shards:' .. ck) == 0 then
    rcall('DEL', cx.c .. 'refusals:' .. ck)
    rcall('SREM', cx.c .. 'held_keys:' .. name, key)
  else
    local n, again = room(cx, name, key, DRAIN)
    if n > 0 then
      order_wakes(cx, name, key, n, orders)
    elseif again then
      rcall('ZADD', wake_due, 'LT', again, ck)
    end
  end
end
if cx.joined then
  run_wakes(cx, orders, shard_keys_like(KEYS[3], KEYS[4], KEYS[5], ARGV[3]), ARGV[4])
  orders = {}
end
-- After the orders: those run here may have left pairs due now.
local next_due = rcall('ZRANGE', wake_due, '0', '0', 'WITHSCORES')
local out = {next_due[2] and math.floor(tonumber(next_due[2])) or -1}
for _, v in ipairs(orders) do out[#out + 1] = v end
return out
