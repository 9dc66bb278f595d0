-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ Moves a waiting job whose record took merged pushes (merge_target) to where its new values
  put it, and saves the record. `was` is a copy of the record from before the merge. Where a job
  that has not started can wait (docs/REDIS.md), and what moves it:
  - behind another job of its ordering key (R_BLOCKED_BY 'ordering_key'): nothing; it enters
    the queue with its new values when its turn comes (enter_queue);
  - scheduled: a new ready time moves it in the scheduled zset, or, when it has passed, makes it
    ready now, at the back of its list, stamped with the push;
  - held by a constraint: a new ready time still ahead schedules it; new constraint pairs send it
    to the front of its ready list with its old stamp, to be admitted again under them (as
    reclassifyJobs does); otherwise it stays held and, woken, joins its new priority's list;
  - ready: a new ready time still ahead schedules it; a new priority moves it to the back of
    that priority's list, stamped with the push (its old member, left in place unless it is at
    an end, no longer matches the record: reserveJobs and browseJobs skip it).
  k        keys of the shard: {jobs, ready_prefix, scheduled, counts}
  opts     {now_ms, stamp (the push's ready stamp, base62), channel, shard,
           held (holds_of: the shard's held zsets, which unhold_here leaves)}
  retimed  whether the merge gave the job a new ready time (R_READY_AT_MS)
]]
local function settle_merged(k, opts, field, was, record, retimed)
  local name = record[R_NAME]
  local ahead = retimed and record[R_READY_AT_MS] > opts.now_ms
  local blocked = was[R_BLOCKED_BY]
  if blocked == 'ordering_key' then
    -- Waits in its line; nothing else names it.
  elseif was[R_STATE] == S_SCHEDULED then
    if ahead then
      rcall('ZADD', k.scheduled, record[R_READY_AT_MS], field)
      rcall('SPUBLISH', opts.channel, string.format('s %d', record[R_READY_AT_MS]))
    elseif retimed then
      rcall('ZREM', k.scheduled, field)
      count_add(k.counts, 'scheduled', name, -1)
      count_add(k.counts, 'ready', name, 1)
      record[R_STATE] = S_QUEUED
      join_ready(k, opts, field, record, opts.stamp)
    end
  elseif blocked ~= '' then
    local matched_anew = cmsgpack.pack(was[R_CONSTRAINTS]) ~= cmsgpack.pack(record[R_CONSTRAINTS])
    if ahead or matched_anew then
      unhold_here(opts.held, was, field)
      record[R_BLOCKED_BY] = ''
      if ahead then
        schedule_queued(k, opts, field, record)
      else
        join_ready(k, opts, field, record, was[R_READY_STAMP], true)
      end
    end
  else
    local moved = ahead or record[R_PRIORITY] ~= was[R_PRIORITY]
    if moved then
      leave_ready(k.ready_prefix .. name, was[R_PRIORITY], was[R_READY_STAMP] .. field)
    end
    if ahead then
      schedule_queued(k, opts, field, record)
    elseif moved then
      join_ready(k, opts, field, record, opts.stamp)
    end
  end
  save_record(k.jobs, field, record)
end
