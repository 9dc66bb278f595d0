-- Shared by the scripts (prepended at build time); takes no KEYS or ARGV of its own.
-- Makes `members` (all of one priority) ready: at the back, as the newest, or with `front` at the
-- front, where a released job had its turn. The priority (a number, or its decimal digits) is
-- written once as digits: Redis formats each number argument with %.17g, and Lua a number in a
-- concatenation with %.14g, both slower than string.format's %d.
local function make_ready(queue, priority, members, front)
  local p = string.format('%d', priority)
  rcall(front and 'LPUSH' or 'RPUSH', ready_list(queue, p), unpack(members))
  rcall('ZADD', queue, p, p)
end
