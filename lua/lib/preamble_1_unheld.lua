-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- `n` jobs of the pair (name, key) left this shard's held zset (woken, cancelled, matched anew):
-- the counts the live state and /metrics read follow. A count at 0 is deleted (absent = 0).
local function unheld(h, name, key, n)
  local minus = digits(-n)
  if rcall('HINCRBY', h.waiting .. name, key, minus) <= 0 then
    rcall('HDEL', h.waiting .. name, key)
  end
  local field = 'waiting:' .. name
  if rcall('HINCRBY', h.tallies, field, minus) <= 0 then rcall('HDEL', h.tallies, field) end
end
