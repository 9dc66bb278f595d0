-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ A queued job (counted ready) that is in no ready list or held set any more waits for its
  R_READY_AT_MS instead: state scheduled, in the shard's scheduled zset, counted scheduled, and
  "s <due_ms>" tells the promoters. The caller saves the record.
  k     keys of the shard: {scheduled, counts}
  opts  {channel}
]]
local function schedule_queued(k, opts, field, record)
  local due = record[R_READY_AT_MS]
  record[R_STATE] = S_SCHEDULED
  rcall('ZADD', k.scheduled, due, field)
  count_add(k.counts, 'ready', record[R_NAME], -1)
  count_add(k.counts, 'scheduled', record[R_NAME], 1)
  rcall('SPUBLISH', opts.channel, string.format('s %d', due))
end
