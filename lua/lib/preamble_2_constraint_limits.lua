-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ The limits of constraint `name` as a script needs them, read once per script run:
  {concurrency = n or nil, emission_ms = period / limit (ms) or nil, burst = n, paused = bool},
  or false when the constraint no longer exists (a deleted constraint holds nothing back).
]]
local function constraint_limits(cx, name)
  local limits = cx.cache[name]
  if limits ~= nil then return limits end
  limits = false
  local raw = rcall('HGET', cx.defs, name)
  if raw then
    local def = cmsgpack.unpack(raw)
    limits = {concurrency = tonumber(def.concurrency), paused = def.paused == true, burst = 0}
    if type(def.rate) == 'table' and tonumber(def.rate.limit) then
      limits.emission_ms = tonumber(def.rate.period) * 1000 / tonumber(def.rate.limit)
      limits.burst = tonumber(def.rate.burst) or 0
    end
  end
  cx.cache[name] = limits
  return limits
end
