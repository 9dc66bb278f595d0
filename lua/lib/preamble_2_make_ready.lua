-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- Makes `members` (all of one priority) ready: at the back, as the newest, or with `front` at the
-- front, where a released job had its turn. The priority is a number or its digits.
local function make_ready(queue, priority, members, front)
  local p = digits(priority)
  rcall(front and 'LPUSH' or 'RPUSH', ready_list(queue, p), unpack(members))
  rcall('ZADD', queue, p, p)
end
