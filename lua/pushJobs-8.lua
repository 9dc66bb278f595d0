#!lua
--[[ pushJobs: stores a batch of new jobs in one shard, all or nothing, each ready at once,
  scheduled (a delay or run_at), or queued behind the jobs of its ordering key; a job whose
  (name, unique_key) claim is held by a live job is not stored, and the answer names that job.
  Invariant: every ready job has a record in state queued and exactly one member,
  R_READY_STAMP .. field, in the ready list of its name and priority
  (lua/lib/preamble_1_ready_list.lua). Within a batch the jobs join their lists in push
  order. A job of an ordering key is ready only as the first of its line
  (lua/lib/preamble_4_finish_for_good.lua); the others wait, queued with R_BLOCKED_BY.
  Memory: refused while Redis is over maxmemory, before it writes anything: it stores new jobs.
  KEYS[1] stats hash of the shard (seq, pushed, ...)
  KEYS[2] jobs prefix of the shard (record buckets, see the preamble)
  KEYS[3] names set of the shard (job names seen)
  KEYS[4] ready prefix of the shard: the queue of name N is KEYS[4] .. N (keys.cpp builds it so)
  KEYS[5] counts hash of the shard (ready:<name>, scheduled:<name> += jobs pushed)
  KEYS[6] scheduled zset of the shard (field, score = due ms)
  KEYS[7] unique prefix of the shard (claims: lua/lib/preamble_1_unique_claim.lua)
  KEYS[8] order prefix of the shard: the line of ordering key K is KEYS[8] .. K
  ARGV[1] now (ms since the epoch): enqueued_at
  ARGV[2] ready stamp (µs since the epoch, non-decreasing per master)
  ARGV[3] events channel: gets announce_ready once per distinct name of the batch made ready
          when the batch's best job of that name is its queue's new head (no job of that
          priority or better was ready: a master that knows the queue holds a head at least as
          good, and reserving finds the jobs behind it), and "s <due_ms>" with the earliest due
          time when jobs were scheduled
  ARGV[4] traceparent (W3C, validated by the master) kept in every job's R_TRACEPARENT; '' for
          none
  ARGV[5] the shard (its number, for the announcements)
  ARGV[6..] twelve per job: name, argument (MessagePack bytes), priority (int32), max_retry,
            keep_result (0|1), timeout (ms), ready_at (ms since the epoch; 0 or past = now),
            unique_key ('' none), unique_until (0 finished | 1 started), unique_for (ms),
            ordering_key ('' none), constraints (the ones it matched: a MessagePack array
            [name1, key1, ...], kept as R_CONSTRAINTS; '' none)
  Returns: {fields, duplicates}: one 9-character field per job in the order given (a
           duplicate's is the field of the job holding the claim, possibly one earlier in the
           batch), and the 0-based positions of the duplicates. Nothing is stored for those.
]]
local stats, jobs, names, ready_prefix, counts = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local scheduled, unique_prefix, order_prefix = KEYS[6], KEYS[7], KEYS[8]
local now = tonumber(ARGV[1])
local stamp = base62(tonumber(ARGV[2]), 9)
local channel = ARGV[3]
local traceparent = ARGV[4]
local shard = ARGV[5]
local first_job, per_job = 6, 12
local count = (#ARGV - first_job + 1) / per_job

-- First the claims: a duplicate (of a stored job, or of one earlier in the batch) gets no field.
local duplicate_of, claimed, fresh = {}, {}, 0
for i = 0, count - 1 do
  local a = first_job + i * per_job
  if ARGV[a + 7] ~= '' then
    local claim = unique_claim(unique_prefix, ARGV[a], ARGV[a + 7])
    if claimed[claim] then
      duplicate_of[i] = claimed[claim]
    else
      -- A claim whose holder is gone or dead (it should have been let go) is free.
      local holder = rcall('GET', claim)
      local record = holder and load_record(jobs, holder)
      if record and record[R_STATE] ~= S_DEAD then
        duplicate_of[i] = holder
      else
        claimed[claim] = i
      end
    end
  end
  if duplicate_of[i] == nil then fresh = fresh + 1 end
end

local fields, duplicates = {}, {}
local next_seq = 0
if fresh > 0 then next_seq = rcall('HINCRBY', stats, 'seq', fresh) - fresh + 1 end
-- Per name made ready: {best priority, its first member, per priority the members in push
-- order}.
local by_name, ready_names = {}, {}
local added, names_in_batch = {}, {}  -- per name: {ready = n, scheduled = n}
local records, due_jobs, earliest_due = batched('HSET'), batched('ZADD'), nil
for i = 0, count - 1 do
  local a = first_job + i * per_job
  local holder = duplicate_of[i]
  if holder then
    fields[i + 1] = type(holder) == 'number' and fields[holder + 1] or holder
    duplicates[#duplicates + 1] = i
  else
    local name, priority = ARGV[a], tonumber(ARGV[a + 2])
    local ready_at, unique_key, ordering_key = tonumber(ARGV[a + 6]), ARGV[a + 7], ARGV[a + 10]
    local field = base62(next_seq, 9)
    next_seq = next_seq + 1
    fields[i + 1] = field
    if unique_key ~= '' then
      rcall('SET', unique_claim(unique_prefix, name, unique_key), field, 'PX', ARGV[a + 9])
    end
    local state, blocked_by = S_QUEUED, ''
    if ordering_key ~= '' and rcall('RPUSH', order_prefix .. ordering_key, field) > 1 then
      blocked_by = 'ordering_key'
    elseif ready_at > now then
      state = S_SCHEDULED
    end
    local bucket, slot = record_at(jobs, field)
    records.add(bucket, slot, cmsgpack.pack({name, ARGV[a + 1], priority, tonumber(ARGV[a + 3]),
      tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5]), state, 0, now, stamp, '', traceparent, '',
      unique_key, tonumber(ARGV[a + 8]), ordering_key, ready_at, blocked_by,
      ARGV[a + 11] ~= '' and cmsgpack.unpack(ARGV[a + 11]) or false}))
    local n = added[name]
    if not n then
      n = {ready = 0, scheduled = 0}
      added[name] = n
      names_in_batch[#names_in_batch + 1] = name
    end
    if state == S_SCHEDULED then
      n.scheduled = n.scheduled + 1
      due_jobs.add(scheduled, ready_at, field)
      if not earliest_due or ready_at < earliest_due then earliest_due = ready_at end
    else
      n.ready = n.ready + 1
    end
    if state == S_QUEUED and blocked_by == '' then
      local member = stamp .. field
      local r = by_name[name]
      if not r then
        r = {priority, member, {}}
        by_name[name] = r
        ready_names[#ready_names + 1] = name
      elseif priority < r[1] then
        r[1], r[2] = priority, member
      end
      local list = r[3][priority]
      if list then list[#list + 1] = member else r[3][priority] = {member} end
    end
  end
end
records.send()
due_jobs.send()
local heads = {}  -- the names whose best pushed job is their queue's new head
for _, name in ipairs(ready_names) do
  local queue = ready_prefix .. name
  local best = by_name[name]
  if #rcall('ZRANGEBYSCORE', queue, '-inf', best[1], 'LIMIT', 0, 1) == 0 then
    heads[#heads + 1] = name
  end
  for priority, members in pairs(best[3]) do make_ready(queue, priority, members) end
end
for _, name in ipairs(names_in_batch) do
  rcall('SADD', names, name)
  for kind, n in pairs(added[name]) do
    if n > 0 then count_add(counts, kind, name, n) end
  end
end
if fresh > 0 then rcall('HINCRBY', stats, 'pushed', fresh) end
for _, name in ipairs(heads) do
  announce_ready(channel, shard, name, by_name[name][1], by_name[name][2])
end
if earliest_due then rcall('SPUBLISH', channel, string.format('s %d', earliest_due)) end
return {fields, duplicates}
