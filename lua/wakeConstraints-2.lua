#!lua flags=allow-oom
--[[ wakeConstraints: lets jobs held back by constraints try again, without anyone polling: the
  promoter calls it at the due times holding a rate announced ("s <due_ms>", from admit and hold),
  and a master calls it after it changed or removed a constraint, whose held jobs may now start.
  A woken job goes back to the front of its ready list (lua/lib/preamble_3_wake_held.lua); one
  that is still held back is held again when a scheduler reaches it.
  Memory: runs while Redis is over maxmemory (allow-oom): held jobs move to their ready lists;
          nothing is added.
  KEYS[1] constraint defs: the definitions hash (name -> MessagePack)
  KEYS[2] constraint state prefix (lua/lib/preamble_1_constraint_context.lua)
  ARGV[1] now (ms since the epoch)
  ARGV[2] key prefix (the shards' keys are built from it)
  ARGV[3] events channel (announce_ready for every job woken)
  ARGV[4] what: "" for the keys whose rate is due; else a constraint's name: each of its keys
          wakes as many as may start now (a removed constraint: all of them)
  ARGV[5] max: the most jobs to wake in this call
  Returns: {woken, next}: with "" next is the earliest due time left (ms, -1 for none); with a
           name, how many jobs of it are still held (call again while woken > 0 and next > 0).
]]
local now, max = tonumber(ARGV[1]), tonumber(ARGV[5])
local cx = constraint_context(KEYS[1], KEYS[2], ARGV[2], now, ARGV[3])
local woken = 0

-- How many jobs of a key may start now (more wake only to be held again).
local function room(limits, name, key)
  if not limits then return max end
  if limits.paused then return 0 end
  local n = max
  if limits.concurrency then
    n = math.min(n, limits.concurrency -
                 rcall('ZCOUNT', cx.c .. 'lease:' .. name .. '#' .. key, now, '+inf'))
  end
  if limits.emission_ms then n = math.min(n, 1 + limits.burst) end
  return math.max(n, 0)
end

if ARGV[4] == '' then
  local due = rcall('ZRANGEBYSCORE', cx.c .. 'rate_due', '-inf', now, 'LIMIT', 0, 100)
  for _, ck in ipairs(due) do
    rcall('ZREM', cx.c .. 'rate_due', ck)
    local hash = string.find(ck, '#', 1, true)
    local name, key = string.sub(ck, 1, hash - 1), string.sub(ck, hash + 1)
    if woken < max then
      woken = woken + wake_held(cx, name, key, math.min(max - woken,
                                                        room(constraint_limits(cx, name), name,
                                                             key)))
    end
  end
  local next_due = rcall('ZRANGE', cx.c .. 'rate_due', 0, 0, 'WITHSCORES')
  return {woken, next_due[2] and math.floor(tonumber(next_due[2])) or -1}
end

local name = ARGV[4]
local limits = constraint_limits(cx, name)
local waiting = cx.c .. 'waiting:' .. name
for _, key in ipairs(rcall('HKEYS', waiting)) do
  if woken >= max then break end
  woken = woken + wake_held(cx, name, key, math.min(max - woken, room(limits, name, key)))
end
local left = 0
for _, n in ipairs(rcall('HVALS', waiting)) do left = left + tonumber(n) end
return {woken, left}
