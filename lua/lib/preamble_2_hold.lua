-- Shared by the scripts (prepended at build time); takes no KEYS or ARGV of its own.
--[[ Holds a queued job back for the constraint key admit() named: it waits in the key's held
  zset, ordered by its ready stamp, until a slot frees (release_constraints), its rate comes due
  (wakeConstraints) or the constraint changes. It keeps state queued and its ready count, and
  uses no attempt. The caller sets R_BLOCKED_BY and saves the record.
]]
local function hold(cx, blocked, job_id, stamp)
  local name, key, due = blocked[1], blocked[2], blocked[3]
  local ck = name .. '#' .. key
  rcall('ZADD', cx.c .. 'held:' .. ck, stamp, job_id)
  rcall('HINCRBY', cx.c .. 'waiting:' .. name, key, 1)
  rcall('HINCRBY', cx.c .. 'counters', 'deferred:' .. name, 1)
  if due then
    rcall('ZADD', cx.c .. 'rate_due', 'LT', due, ck)
    rcall('SPUBLISH', cx.channel, string.format('s %d', due))
  end
end
