-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ Hands `n` starts of a pair to its held jobs, oldest first across the shards, as wake orders
  appended to `out`, five values each: name, key, shard, n, bound. The master runs each with
  unholdJobs in that shard (up to n of the pair's jobs held there, none younger than bound, -1
  for no bound) and reports back with ackWake, which hands what was not used on. The pair's
  held_shards zset (shard -> the oldest ready stamp held there) says where to go: the shard
  holding the oldest, bounded by the next shard's oldest; with `after` (ackWake handing on what
  an order could not use), the oldest of the shards whose stamp is later than that, so a chain of
  orders moves forward and ends. With n >= DRAIN (a removed constraint: nothing holds its jobs
  any more) every shard is ordered at once.
  The pair is looked at again HANDOFF_MS later (it goes into wake_due: wakeConstraints): a
  hand-off its master never finished (it stopped between the calls), or a woken job that does
  not start after all (cancelled, its queue paused, another of its constraints refusing it,
  no worker for its name), would otherwise leave the pair's other held jobs waiting for a
  release that never comes, though the limit lets them go. When the caller runs the orders in
  its own step (cx.joined, one Redis: lua/lib/preamble_5_run_wakes.lua) it also notes each
  order's stamp as listed (cx.listed), which ack_wake needs.
  first    (optional, n < DRAIN, no `after`) the first two entries of held_shards WITHSCORES, as
           the caller read them
]]
local HANDOFF_MS, DRAIN = 10000, 1000
local function order_wakes(cx, name, key, n, out, after, first)
  local ck = name .. '#' .. key
  local held_shards = cx.c .. 'held_shards:' .. ck
  local shards = first
  if after then
    shards = rcall('ZRANGEBYSCORE', held_shards, '(' .. after, '+inf', 'WITHSCORES', 'LIMIT', '0',
                   '2')
  elseif not shards then
    shards = rcall('ZRANGE', held_shards, '0', n >= DRAIN and '-1' or '1', 'WITHSCORES')
  end
  if #shards == 0 then return end
  if n >= DRAIN then
    for i = 1, #shards, 2 do
      for _, v in ipairs({name, key, shards[i], DRAIN, -1}) do out[#out + 1] = v end
    end
  else
    local bound = shards[4] and tonumber(shards[4]) or -1
    for _, v in ipairs({name, key, shards[1], n, bound}) do out[#out + 1] = v end
    if cx.joined then cx.listed[ck .. '@' .. shards[1]] = shards[2] end
  end
  rcall('ZADD', cx.c .. 'wake_due', 'LT', cx.now + HANDOFF_MS, ck)
end
