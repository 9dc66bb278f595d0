-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ How many held jobs of the pair (name, key) may start now as far as its constraint goes, at
  most `max`; and when none may, when to look again (nil: only a release or a change of the
  constraint can open it). A removed constraint holds nothing back: `max`. A rate lets 1 + burst
  go at its due time (those it cannot start are held again, with the next due time).
  Returns n, again_ms.
]]
local function room(cx, name, key, max)
  local limits = constraint_limits(cx, name)
  if not limits then return max, nil end
  if limits.paused then return 0, nil end
  local ck = name .. '#' .. key
  local n, again = max, nil
  if limits.concurrency then
    local leases = cx.c .. 'lease:' .. ck
    n = math.min(n, limits.concurrency - rcall('ZCOUNT', leases, cx.now_s, '+inf'))
    if n <= 0 then
      -- Its slots free when their attempts end, at the latest at their deadlines.
      local first = rcall('ZRANGEBYSCORE', leases, cx.now_s, '+inf', 'WITHSCORES', 'LIMIT', '0',
                          '1')
      again = tonumber(first[2])
    end
  end
  if limits.emission_ms then
    local tat = load_tat(cx, ck, limits) or cx.now
    local allowed_at = math.ceil(tat - limits.burst * limits.emission_ms)
    if allowed_at > cx.now then
      n = 0
      if not again or allowed_at < again then again = allowed_at end
    else
      n = math.min(n, 1 + limits.burst)
    end
  end
  -- Below DRAIN (1000, lua/lib/preamble_2_order_wakes.lua), the wake-everything order of a
  -- removed constraint, whatever a rate's burst.
  return math.min(math.max(n, 0), 999), again
end
