-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ A pair's GCRA theoretical arrival time (ms), nil when the pair has none, as the rate in force
  sees it. store_tat keeps the emission interval the steps were taken at beside it: when the
  rate changed since (PATCH /v1/constraints), what is still owed is counted again in steps of
  the new interval (and stored so), as the contract has a new rate apply to the next start: a
  limit of 1 a day raised to 100 a second owes the new 10 ms, not the rest of the day. A value
  without an interval (written before it was kept) is taken as it is.
  cx      constraint_context(...)
  ck      the pair, "<name>#<key>"
  limits  constraint_limits(...) of a constraint with a rate (emission_ms, burst)
]]
local function load_tat(cx, ck, limits)
  local stored = rcall('GET', cx.c .. 'tat:' .. ck)
  if not stored then return nil end
  local tat_text, emission_text = string.match(stored, '^(%S+) (%S+)$')
  if not tat_text then return tonumber(stored) end
  local tat, emission = tonumber(tat_text), tonumber(emission_text)
  if emission ~= limits.emission_ms and emission > 0 and tat > cx.now then
    tat = cx.now + (tat - cx.now) * limits.emission_ms / emission
    store_tat(cx, ck, tat, limits)
  end
  return tat
end
