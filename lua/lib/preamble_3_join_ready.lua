-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ Puts a queued job into the ready list of its name and priority under `stamp` (base62, 9):
  at the back, as the newest, or with `front` at the front (a job that keeps its turn), and
  announces it to every master. The caller keeps the counts and saves the record.
  k     keys of the shard: {ready_prefix}
  opts  {channel, shard}
]]
local function join_ready(k, opts, field, record, stamp, front)
  local name, priority = record[R_NAME], record[R_PRIORITY]
  record[R_READY_STAMP] = stamp
  make_ready(k.ready_prefix .. name, priority, {stamp .. field}, front)
  announce_ready(opts.channel, opts.shard, name, priority, stamp .. field)
end
