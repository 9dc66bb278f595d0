-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ Holds a queued job back in its shard for the pair (name, key): it waits in the pair's held
  zset (lua/lib/preamble_1_holds_of.lua), ordered by its ready stamp, until unholdJobs wakes it.
  It keeps state queued and its ready count and uses no attempt. The caller sets R_BLOCKED_BY
  and saves the record.
  h  holds_of(<shard's prefix>); stamp: the job's ready stamp (µs), a number or its decimal digits
]]
local function hold_here(h, name, key, field, stamp)
  rcall('ZADD', h.held .. name .. '#' .. key, stamp, field)
  rcall('HINCRBY', h.waiting .. name, key, '1')
  rcall('HINCRBY', h.tallies, 'waiting:' .. name, '1')
  rcall('HINCRBY', h.tallies, 'deferred:' .. name, '1')
end
