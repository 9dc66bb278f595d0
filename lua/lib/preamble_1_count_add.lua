-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- The counts hash of a shard holds, per job name, how many of its jobs are ready, scheduled,
-- running and dead, in fields '<kind>:<name>' with kind 'ready', 'scheduled', 'running' or
-- 'dead'. A field that drops to 0 is deleted, so an absent field
-- means 0 and the hash only names what is there. It cannot go below 0 unless the counts were out
-- of step with the jobs; deleting the field then starts it again from 0.
local function count_add(counts_key, kind, name, delta)
  local field = kind .. ':' .. name
  if rcall('HINCRBY', counts_key, field, digits(delta)) <= 0 then
    rcall('HDEL', counts_key, field)
  end
end
