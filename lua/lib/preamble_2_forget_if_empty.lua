-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- After members left the list of `priority` in `queue`: a list now empty leaves the priorities.
local function forget_if_empty(queue, priority)
  if rcall('EXISTS', ready_list(queue, priority)) == 0 then rcall('ZREM', queue, priority) end
end
