-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ A pair's GCRA theoretical arrival time (ms) as the rate in force sees it, nil when the pair
  has none: as stored (store_tat), but at most (burst + 1) steps of this rate ahead of now, which
  is as far as steps at this rate take it. A rate raised since the steps were taken (a period of
  a day made a second) thus owes at most one step of the new rate, and the new value applies to
  the next start, as the contract says, instead of after the old interval. The lowered time is
  stored, so that the debt it forgave does not come back at the next look.
  cx      constraint_context(...)
  ck      the pair, "<name>#<key>"
  limits  constraint_limits(...) of a constraint with a rate (emission_ms, burst)
]]
local function load_tat(cx, ck, limits)
  local tat = tonumber(rcall('GET', cx.c .. 'tat:' .. ck))
  if not tat then return nil end
  local most = cx.now + (limits.burst + 1) * limits.emission_ms
  if tat > most then
    tat = most
    store_tat(cx, ck, tat, limits)
  end
  return tat
end
