-- Shared by the scripts (prepended at build time); takes no KEYS or ARGV of its own.
-- Makes `members` (all of one priority) ready: at the back, as the newest, or with `front` at the
-- front, where a released job had its turn.
local function make_ready(queue, priority, members, front)
  rcall(front and 'LPUSH' or 'RPUSH', ready_list(queue, priority), unpack(members))
  rcall('ZADD', queue, priority, priority)
end
