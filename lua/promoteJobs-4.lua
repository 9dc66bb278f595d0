#!lua flags=allow-oom
--[[ promoteJobs: makes due retries ready. A promoted job joins the back of its ready list with a
  new stamp, its due time (base62(due_ms * 1000), the µs scale of push stamps): it became
  ready then, so among equal priorities it goes after jobs that were ready before it. The batch
  writes each key it changes with one command, not one per job (records are read one by one).
  Memory: runs while Redis is over maxmemory (allow-oom): due jobs move from the scheduled set to
          their ready lists; nothing is added.
  KEYS[1] scheduled zset of the shard (field, score = due ms)
  KEYS[2] jobs prefix of the shard (record buckets, see the preamble)
  KEYS[3] ready prefix of the shard (the queue of name N = KEYS[3] .. N)
  KEYS[4] counts hash of the shard (scheduled:<name> -= 1, ready:<name> += 1 per promoted job)
  ARGV[1] now (ms since the epoch): jobs due at or before it are promoted
  ARGV[2] max: the most jobs to promote
  ARGV[3] events channel: gets announce_ready once per distinct name promoted, with its best
          promoted job
  ARGV[4] the shard (its number, for the announcements)
  Returns: {promoted, next_due_ms}: next_due_ms is the due time of the earliest job left
           scheduled (the promoter sleeps until then), -1 when none is left.
]]
local scheduled, jobs, ready_prefix, counts = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local channel = ARGV[3]
local due_jobs = rcall('ZRANGEBYSCORE', scheduled, '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', '0',
                       ARGV[2])
-- One command per key for the whole batch (lib/preamble_1_batched.lua); lists keep due order.
local removed, records = batched('ZREM'), batched('HSET')
local lists, queues = batched('RPUSH'), batched('ZADD')
local promoted, names, best, moved = 0, {}, {}, {}
for i = 1, #due_jobs, 2 do
  local field, due = due_jobs[i], tonumber(due_jobs[i + 1])
  removed.add(scheduled, field)
  local record = load_record(jobs, field)
  -- A field without a scheduled record should not exist; it is dropped, not promoted.
  if record and record[R_STATE] == S_SCHEDULED then
    local name = record[R_NAME]
    local priority, stamp = record[R_PRIORITY], base62(due * 1000)
    local member = stamp .. field
    record[R_STATE] = S_QUEUED
    record[R_READY_STAMP] = stamp
    local bucket, slot = record_at(jobs, field)
    records.add(bucket, slot, pack_record(record))
    local queue = ready_prefix .. name
    lists.add(ready_list(queue, priority), member)
    queues.add(queue, priority, priority)
    promoted = promoted + 1
    local b = best[name]
    if not b then
      best[name] = {priority, member}
      names[#names + 1] = name
      moved[name] = 1
    else
      moved[name] = moved[name] + 1
      if priority < b[1] or (priority == b[1] and bytes_less(member, b[2])) then
        best[name] = {priority, member}
      end
    end
  end
end
removed.send()
records.send()
lists.send()
queues.send()
for _, name in ipairs(names) do
  count_add(counts, 'scheduled', name, -moved[name])
  count_add(counts, 'ready', name, moved[name])
end
for _, name in ipairs(names) do
  announce_ready(channel, ARGV[4], name, best[name][1], best[name][2])
end
local next_job = rcall('ZRANGE', scheduled, '0', '0', 'WITHSCORES')
if #next_job == 0 then return {promoted, -1} end
return {promoted, tonumber(next_job[2])}
