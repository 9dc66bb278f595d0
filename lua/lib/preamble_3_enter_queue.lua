-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ A queued job that was waiting behind another job of its ordering key (R_BLOCKED_BY
  'ordering_key', counted as ready) becomes the key's head: ready now at the back of its list,
  stamped now, or scheduled when its delay has not passed yet.
  k     keys of the shard: {jobs, ready_prefix, scheduled, counts}
  opts  {now_ms, channel, shard}
]]
local function enter_queue(k, opts, field, record)
  local name, priority = record[R_NAME], record[R_PRIORITY]
  record[R_BLOCKED_BY] = ''
  if record[R_READY_AT_MS] > opts.now_ms then
    schedule_queued(k, opts, field, record)
    save_record(k.jobs, field, record)
    return
  end
  local stamp = base62(opts.now_ms * 1000)
  record[R_READY_STAMP] = stamp
  save_record(k.jobs, field, record)
  make_ready(k.ready_prefix .. name, priority, {stamp .. field})
  announce_ready(opts.channel, opts.shard, name, priority, stamp .. field)
end
