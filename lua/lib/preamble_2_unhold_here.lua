-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ Takes a queued job out of the held zset of the pair holding it in its shard, if one does
  (R_BLOCKED_BY names the constraint; its key is the job's own under it): cancelJob,
  reclassifyJobs. The shard's entry in the pair's held_shards under {c} may then name a shard
  with nothing held; the next wake finds it empty and ackWake lets it go.
  h  holds_of(<shard's prefix>)
]]
local function unhold_here(h, record, field)
  local name, cons = record[R_BLOCKED_BY], record[R_CONSTRAINTS]
  if name == '' or name == 'ordering_key' or not cons then return end
  for i = 1, #cons, 2 do
    if cons[i] == name then
      if rcall('ZREM', h.held .. name .. '#' .. cons[i + 1], field) == 1 then
        unheld(h, name, cons[i + 1], 1)
      end
      return
    end
  end
end
