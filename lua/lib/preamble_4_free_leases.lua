-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ Attempts of constrained jobs ended: their leases go, and for each pair whose limit that
  frees, as many of the jobs it holds as may start now are handed the slots, oldest first across
  the shards (wake orders appended to `out`, lua/lib/preamble_2_order_wakes.lua, which the master
  runs with unholdJobs in their shards). Nothing polls: the freed slot is handed on by the call
  that frees it. A lease is named by its attempt, so releasing an attempt that already ended (a
  late answer, a reaped job) changes nothing. A pair limited by a rate alone waits for its due
  time, not for a release (unless the release gave a rate step back); a pair whose freed slot
  its rate does not let go yet is due when the rate lets it (its held jobs were refused for the
  full slots, so what was due for them is the slots' deadlines, up to their timeouts away).
  Used by releaseLeases (under {c} alone, on a cluster) and by completeJobs (in the same step as
  the completion, when one Redis holds every key).
  cx      constraint_context(...)
  leases  {{lease, cons, unsent}, ...}: each attempt's name ("<shard>-<field>:<attempt>", as
          admitted), its constraints ({name1, key1, ...}, as in R_CONSTRAINTS), and whether it was
          never sent (then the rate steps it took are given back: a rate counts dispatches
          actually sent)
  channel the {c} events channel: "s <due_ms>" when a pair is due sooner than before
]]
-- One step of the pair's GCRA taken back (admission_take added it).
local function give_back_rate_step(cx, ck, limits)
  local tat = load_tat(cx, ck, limits)
  if tat then store_tat(cx, ck, tat - limits.emission_ms, limits) end
end

local function free_leases(cx, leases, out, channel)
  local freed, order = {}, {}
  for _, l in ipairs(leases) do
    local lease, cons, unsent = l[1], l[2], l[3]
    for i = 1, #cons, 2 do
      local name, key = cons[i], cons[i + 1]
      local ck = name .. '#' .. key
      local pair_leases = cx.c .. 'lease:' .. ck
      if rcall('ZREM', pair_leases, lease) == 1 then
        local limits = unsent and constraint_limits(cx, name)
        local refunded = limits and limits.emission_ms and true or false
        if refunded then give_back_rate_step(cx, ck, limits) end
        if rcall('EXISTS', pair_leases) == 0 then
          rcall('SREM', cx.c .. 'lease_keys:' .. name, key)
        end
        if not freed[ck] then
          freed[ck] = {name = name, key = key, n = 0}
          order[#order + 1] = ck
        end
        freed[ck].n = freed[ck].n + 1
        freed[ck].refunded = freed[ck].refunded or refunded
      end
    end
  end
  for _, ck in ipairs(order) do
    local f = freed[ck]
    -- Where the pair holds jobs, read once: order_wakes starts from it.
    local first = rcall('ZRANGE', cx.c .. 'held_shards:' .. ck, '0', '1', 'WITHSCORES')
    if #first > 0 then
      local limits = constraint_limits(cx, f.name)
      if not limits or limits.concurrency or f.refunded then
        local n, again = room(cx, f.name, f.key, f.n)
        if n > 0 then
          order_wakes(cx, f.name, f.key, n, out, nil, first)
        elseif again then
          pair_due(cx, ck, again, channel)
        end
      end
    end
  end
end
