-- Shared by the scripts (prepended at build time); takes no KEYS or ARGV of its own.
-- Takes a queued job out of the held set of the constraint key holding it (R_BLOCKED_BY names
-- the constraint; its key is the job's own under it), if one does.
local function unhold(cx, record, job_id)
  local name, cons = record[R_BLOCKED_BY], record[R_CONSTRAINTS]
  if name == '' or name == 'ordering_key' or not cons then return end
  for i = 1, #cons, 2 do
    if cons[i] == name then
      if rcall('ZREM', cx.c .. 'held:' .. name .. '#' .. cons[i + 1], job_id) == 1 and
         rcall('HINCRBY', cx.c .. 'waiting:' .. name, cons[i + 1], -1) <= 0 then
        rcall('HDEL', cx.c .. 'waiting:' .. name, cons[i + 1])
      end
      return
    end
  end
end
