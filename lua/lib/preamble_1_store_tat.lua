-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ Writes a pair's GCRA theoretical arrival time (ms), and the emission interval (ms) it was
  taken at, "<tat> <interval>" (load_tat reads it), after a rate step was taken
  (admission_take) or given back (free_leases, an attempt never sent). Past tat + burst steps
  the key is as good as new, so it expires then; a tat at or before now leaves no debt: the key
  goes.
  cx      constraint_context(...)
  ck      the pair, "<name>#<key>"
  limits  constraint_limits(...) of a constraint with a rate (emission_ms, burst)
]]
local function store_tat(cx, ck, tat, limits)
  local tat_key = cx.c .. 'tat:' .. ck
  if tat <= cx.now then
    rcall('DEL', tat_key)
    return
  end
  local keep_ms = math.ceil(tat - cx.now + limits.burst * limits.emission_ms) + 1
  -- With the interval the steps were taken at: load_tat counts them again if the rate changes.
  rcall('SET', tat_key, string.format('%.3f %.17g', tat, limits.emission_ms), 'PX', keep_ms)
end
