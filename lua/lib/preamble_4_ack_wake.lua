-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ What a wake order found in its shard (unhold_pair, lua/lib/preamble_3_unhold_pair.lua), back
  under {c}: the pair's held_shards entry for that shard takes the shard's oldest held stamp, or
  goes when the shard holds nothing for the pair; and what the order could not use (the shard
  had fewer jobs, or the bound stopped it) is handed to the shards after it (more wake orders
  appended to `out`, lua/lib/preamble_2_order_wakes.lua). Used by ackWake (on a cluster, the
  master reports each unholdJobs) and by run_wakes (one Redis: in the same step).
  What follows, up to the refusals' deadlines, is for separate steps only. Joined (cx.joined,
  lua/lib/preamble_5_run_wakes.lua), the report is the shard's truth as this same step left it,
  and no other report or refused job's hold can be on its way: the entry is set to it and no
  report time or refusal count is kept.
  An ack that comes twice or is lost is harmless (a lost one leaves an older stamp that the next
  wake of the shard corrects, and wakeConstraints looks at the pair HANDOFF_MS after the order).
  Acks of two wakes of one shard may come in either order: the unhold time of the last applied
  ack is kept per shard (acked), and a report older than it only settles its refusals and may
  list the shard at an older stamp (ZADD LT); it never lets the shard go, which the newer report
  decided.
  A shard is let go only when every job admission refused there has been settled in the shard
  (refusals counted under {c} against the settled count the shard reported): a hold still on
  its way must find the shard listed, or its job would never be woken. Starts the order could
  not use while such a hold is on its way, and no shard after it took, are not lost: the pair
  is due again RETRY_MS later (announced on `channel`, {c}), when the hold has landed.
  A shard's refusals are no longer waited for once the first of them still counted is older
  than its attempt's deadline plus SETTLE_MS (admitJobs: until:<shard>): its hold was lost with
  its master (that job is reaped and runs again), and the later ones, settled or not, cannot be
  told apart from it.
  asked, woken, listed_at, settled, at: the order's n and what unhold_pair answered for it; the
  oldest stamp held (listed_at) as Redis wrote it (decimal digits, or -1 for none), written back
  as it is (a number argument costs Redis a %.17g formatting)
]]
-- ACKED_MS is 6 * HANDOFF_MS, written out: the library's top level runs while Redis loads it,
-- where no Lua library function (tostring) can be called.
local RETRY_MS, ACKED_MS = 20, '60000'
local function ack_wake(cx, name, key, shard, asked, woken, listed_at, settled, at, channel, out)
  local oldest = tonumber(listed_at)
  local ck = name .. '#' .. key
  local held_shards, refusals = cx.c .. 'held_shards:' .. ck, cx.c .. 'refusals:' .. ck
  local acked, ordered = cx.c .. 'acked:' .. ck, #out
  -- Where this shard stood: what is handed on goes to the shards after it (an order run in the
  -- step that gave it knows: lua/lib/preamble_2_order_wakes.lua).
  local after = cx.joined and cx.listed[ck .. '@' .. shard] or rcall('ZSCORE', held_shards, shard)
  local waiting, listed = 0, false
  if cx.joined then
    if oldest >= 0 then
      rcall('ZADD', held_shards, listed_at, shard)
      listed = true
    else
      rcall('ZREM', held_shards, shard)
    end
  elseif at <= (tonumber(rcall('HGET', acked, shard)) or -1) then
    -- A newer report was applied: this one only settles its refusals.
    if settled > 0 and rcall('HINCRBY', refusals, shard, -settled) <= 0 then
      rcall('HDEL', refusals, shard, 'until:' .. shard)
    end
    if oldest >= 0 and after then
      rcall('ZADD', held_shards, 'LT', listed_at, shard)
      listed = true
    end
  else
    rcall('HSET', acked, shard, at)
    -- Kept past any report still on its way (orders are looked at again after HANDOFF_MS).
    rcall('PEXPIRE', acked, ACKED_MS)
    local counted = rcall('HGET', refusals, shard)
    waiting = (tonumber(counted) or 0) - settled
    if waiting > 0 then
      -- (A pair-wide `until` is what a master of a build before 2026-12-02 wrote.)
      local settle_by = rcall('HGET', refusals, 'until:' .. shard) or
                          rcall('HGET', refusals, 'until')
      if cx.now > (tonumber(settle_by) or 0) then waiting = 0 end
    end
    if waiting > 0 then
      -- A refused job's hold is still on its way here: the shard stays, at the older stamp.
      rcall('HSET', refusals, shard, waiting)
      if oldest >= 0 then rcall('ZADD', held_shards, 'LT', listed_at, shard) end
    else
      if counted then rcall('HDEL', refusals, shard, 'until:' .. shard) end
      if oldest >= 0 then
        rcall('ZADD', held_shards, listed_at, shard)
      else
        rcall('ZREM', held_shards, shard)
      end
    end
    listed = oldest >= 0
  end

  -- The pair's last held shard gone: its {c} records go too.
  if not listed and rcall('EXISTS', held_shards) == 0 then
    rcall('DEL', refusals)
    rcall('SREM', cx.c .. 'held_keys:' .. name, key)
    rcall('ZREM', cx.c .. 'wake_due', ck)
  elseif asked >= DRAIN then
    -- Draining (the constraint is gone): this shard goes on while it has more.
    if oldest >= 0 then
      for _, v in ipairs({name, key, shard, DRAIN, -1}) do out[#out + 1] = v end
    end
  elseif woken < asked then
    local n = room(cx, name, key, asked - woken)
    if n > 0 then order_wakes(cx, name, key, n, out, after) end
    if n > 0 and #out == ordered and waiting > 0 then
      pair_due(cx, ck, cx.now + RETRY_MS, channel)
    end
  end
end
