#!lua
--[[ pushJobs: stores a batch of new jobs in one shard, all or nothing, each ready at once,
  scheduled (a delay or run_at), or queued behind the jobs of its ordering key. A job whose
  (name, unique_key) claim is held by a live job is not stored, and the answer names that job;
  with on_duplicate replace or append, and while that job has not started, the push is merged
  into it instead (lua/lib/preamble_2_merge_target.lua), and the job moves to where its new
  priority, ready time and constraints put it (lua/lib/preamble_4_settle_merged.lua), in this
  same step: whichever master runs the pushes of one claim, they meet here one at a time.
  A job the master asks to take (ARGV[7]) skips the queue: it is stored running, its first
  attempt counted, for the master to send to a worker slot it holds free, in this same step
  (one call where a push and a reservation took two, and no announcement). Only a plain job
  (shape 'p', ARGV[8]) without constraints is taken, and only when nothing of its name and priority or better is
  ready in this shard, before or earlier in the batch: the master asks only when it knows every
  other queue its worker serves to be empty.
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
  KEYS[9] held prefix of the shard (lua/lib/preamble_1_holds_of.lua): a merged job held by a
          constraint may leave its held zset
  KEYS[10] inflight zset of the shard (field, score = deadline ms): jobs taken
  ARGV[1] now (ms since the epoch): enqueued_at
  ARGV[2] ready stamp (µs since the epoch, non-decreasing per master)
  ARGV[3] events channel: gets announce_ready once per distinct name of the batch made ready
          when the batch's best job of that name is its queue's new head (no job of that
          priority or better was ready: a master that knows the queue holds a head at least as
          good, and reserving finds the jobs behind it), and "s <due_ms>" with the earliest due
          time when jobs were scheduled; a merged job that moved is announced on its own
  ARGV[4] traceparent (W3C, validated by the master) kept in every job's R_TRACEPARENT; '' for
          none
  ARGV[5] the shard (its number, for the announcements)
  ARGV[6] max list bytes: the most bytes a list made by on_duplicate append may reach (then,
          as at 1000 elements, the next append makes a new job, which takes over the claim)
  ARGV[7] take: '' for none, or one byte per job, '1' for a job to take if it can be (see
          above), '0' for one to queue. A plain job without constraints asked to be taken comes
          packed running (below): taken, its record is stored as given
  ARGV[8] shapes: one byte per job, how its arguments are laid out: 'p' a plain job (no
          unique key, unique_until finished, no ordering key, no ready time, not an append),
          the most usual, in four; 'f' any job, in thirteen
  ARGV[9] taken by: the token of this call ('' when ARGV[7] is ''), kept in the R_TAKEN_BY slot
          of every job it takes while that job runs (the master packs it into the running
          records), so that a master that lost this call's answer finds the jobs it took
          (findReserved) and gives them back, as for reserveJobs' ARGV[8]
  ARGV[10..] per job as its shape says: four per plain job: name, record (the whole record as
            this call stores the job queued, packed by the master from the values below and
            ARGV[1], ARGV[2], ARGV[4] and ARGV[9]: 13 slots, or 19 with its constraints last;
            or, for a job of 13 slots that ARGV[7] asks to take, as it is stored taken: running
            its first attempt; src/redis/record_head.hpp), priority, timeout;
            thirteen per other job: name, head (the record's first six
            slots, packed by the master, one value after the other: name, argument (a string of
            its MessagePack bytes), priority, max_retry, keep_result, timeout;
            src/redis/record_head.hpp), priority (int32), max_retry, keep_result (0|1),
            timeout (ms), ready_at (ms since the epoch, from delay or run_at; 0 when neither was
            given; at or before now = now), unique_key ('' none), unique_until (0 finished |
            1 started), unique_for (ms), ordering_key ('' none),
            constraints (the ones it matched, for its own argument: a MessagePack array
            [name1, key1, ...], kept as R_CONSTRAINTS; '' none), on_duplicate (0 keep,
            1 replace, 2 append). A plain job sent in thirteen is stored the same, but never taken.
  Returns: {fields, duplicates, merged, taken}: one 9-character field per job in the order given
           (a duplicate's is the field of the job holding the claim, possibly one earlier in the
           batch), the 0-based positions of the duplicates (nothing new was stored for them),
           of those the positions that were merged into the job holding the claim, and the jobs
           taken: {position1, record1, ...}, 0-based positions with the records (MessagePack)
           as stored, running with their first attempt (deadline = now + timeout).
]]
local stats, jobs, names, ready_prefix, counts = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local scheduled, unique_prefix, order_prefix = KEYS[6], KEYS[7], KEYS[8]
local now = tonumber(ARGV[1])
local stamp = base62(tonumber(ARGV[2]))
local channel = ARGV[3]
local traceparent = ARGV[4]
local shard = ARGV[5]
local max_list_bytes = tonumber(ARGV[6])
local takes, inflight = ARGV[7], KEYS[10]
local shapes = ARGV[8]
local taken_by = ARGV[9]
local count = #shapes
-- Where a plain job's record, priority and timeout are, from its name at a (a job in thirteen
-- has its head, priority and timeout at a+1, a+2 and a+5).
local P_RECORD, P_PRIORITY, P_TIMEOUT = 1, 2, 3
local PLAIN = 112  -- 'p'

-- The argument (its MessagePack bytes) of the job whose arguments start at a, from its head.
local function argument_of(a)
  local _, _, argument = cmsgpack.unpack_limit(ARGV[a + 1], 2)  -- offset, name, argument
  return argument
end

-- The job whose arguments start at a, as a record not yet placed (state and blocked_by come
-- when it is stored). Most jobs have no unique key: what only a merge reads (pushed) is unpacked
-- for those that do.
local function arriving(a)
  local mode = tonumber(ARGV[a + 12])
  local argument, appended = argument_of(a), 0
  if mode == D_APPEND then argument, appended = array_header(1) .. argument, 1 end
  local record = {ARGV[a], argument, tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]),
    tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5]), S_QUEUED, 0, now, stamp, '', traceparent, '',
    ARGV[a + 7], tonumber(ARGV[a + 8]), ARGV[a + 10], tonumber(ARGV[a + 6]), '',
    ARGV[a + 11] ~= '' and cmsgpack.unpack(ARGV[a + 11]) or false, false, appended}
  return record
end

-- What a merge reads from the push of job i (its arguments start at a).
local function pushed(a, record)
  return {argument = argument_of(a), priority = record[R_PRIORITY],
          ready_at = record[R_READY_AT_MS], unique_until = record[R_UNIQUE_UNTIL],
          unique_for = ARGV[a + 9], constraints = record[R_CONSTRAINTS], mode = tonumber(ARGV[a + 12])}
end

-- A plain job (the usual one: shape 'p') has no unique key (nor unique_until started),
-- ordering key or ready time, and is not an append; it may have matched constraints. The master
-- sends it in four arguments instead of thirteen, which cost Redis 0.85 µs per job to parse and
-- hand to Lua, and packs its whole record: building the 21 slots of a record and trimming them
-- took twice as long as packing the values (1.3 against 0.6 µs per job in Redis's Lua), packing
-- the values took a quarter of this script's time per plain job, and joining the master's head
-- to slots packed here another 0.3 µs. A plain record has 13 slots unless it has constraints.
local PLAIN_HEADER = string.byte(RECORD_HEADERS[13])

-- Whether the master packed the plain job at position i (arguments at a) running: it asked to
-- take it, and it has no constraints (13 slots). Its record is then stored as given when it is
-- taken, the usual case: every Lua string made of a record costs Redis a pass over its bytes
-- (Redis hashes the whole string), about 1 us per KiB of argument.
local function asked_to_take(i, a)
  return takes ~= '' and string.byte(takes, i + 1) == 49 and
         string.byte(ARGV[a + P_RECORD], 1) == PLAIN_HEADER
end

-- The record of the plain job at a that the master packed running (asked_to_take) but that is
-- queued instead: slots 7-13 (state, attempts, enqueued_at, the ready stamp, last_error,
-- traceparent, result: R_TAKEN_BY while it runs) as a queued one's.
local tails = nil
local function queued_plain(a)
  tails = tails or {queued = cmsgpack.pack(S_QUEUED, 0, now, stamp, '', traceparent, ''),
                    running = cmsgpack.pack(S_RUNNING, 1, now, stamp, '', traceparent, taken_by)}
  local running = ARGV[a + P_RECORD]
  return string.sub(running, 1, #running - #tails.running) .. tails.queued
end

-- The job holding a claim: {field, record, was (a copy), waiting} for a stored one, nil when the
-- claim is free (a holder gone or dead should have let go of it). Only a waiting holder, one that
-- has never started, takes merges.
local function stored_holder(record_in)
  local field = claim_holder(unique_prefix, jobs, record_in[R_NAME], record_in[R_UNIQUE_KEY],
                             record_in[R_ORDERING_KEY])
  local record = field and load_record(jobs, field)
  if not record or record[R_STATE] == S_DEAD then return nil end
  local waiting = (record[R_STATE] == S_QUEUED or record[R_STATE] == S_SCHEDULED) and
                  record[R_ATTEMPTS] == 0
  return {field = field, record = record, was = setmetatable({unpack(record)}, RECORD),
          waiting = waiting}
end

-- First the claims. Per position: the holder a duplicate points at (a stored job, or a job of
-- this batch: {record, waiting = true}) and whether it merged; nothing for a new job.
-- The new jobs in push order: their records (a plain job: where its arguments start) and
-- positions, and for those with a claim the holder entry other pushes of the batch may merge
-- into (most jobs have none: no table).
local holders = {}  -- claim -> its holder (false: free)
local fresh, fresh_at, fresh_holder = {}, {}, {}
local duplicate_of, merged_into, merged_stored = {}, {}, {}
local a = 10  -- where the next job's arguments start
for i = 0, count - 1 do
  if string.byte(shapes, i + 1) == PLAIN then
    local k = #fresh + 1
    fresh[k], fresh_at[k] = a, i
    a = a + 4
  else
    local record = arriving(a)
    local claim = record[R_UNIQUE_KEY] ~= '' and
                  unique_claim(unique_prefix, record[R_NAME], record[R_UNIQUE_KEY],
                               record[R_ORDERING_KEY])
    local push = claim and pushed(a, record)
    a = a + 13
    local holder = claim and holders[claim]
    if claim and holder == nil then
      holder = stored_holder(record) or false
      holders[claim] = holder
    end
    -- A holder on its way to a run cannot take a merge; nor may the push be lost. A holder whose
    -- claim ends at its start still has it then only while its constraints' admission is
    -- pending (a reservation keeps it until admitJobs has spoken, in a separate step on a
    -- cluster): as once it starts, a new job takes the claim over. (A claim that lasts until
    -- the holder finishes makes the push a plain duplicate.)
    if holder and push.mode ~= D_KEEP and holder.record[R_STATE] == S_RUNNING and
       holder.record[R_UNIQUE_UNTIL] == 1 then
      holder = false
    end
    if holder then
      if push.mode ~= D_KEEP and holder.waiting then
        holder.merge = holder.merge or merge_target(holder.record, max_list_bytes)
        if holder.merge.fold(push) then
          merged_into[i] = true
          holder.unique_for = push.unique_for
          if holder.field and not holder.listed then
            holder.listed = true
            merged_stored[#merged_stored + 1] = {claim, holder}
          end
        else
          holder = false  -- a full list: this push makes a new job, which takes over the claim
        end
      end
      if holder then duplicate_of[i] = holder end
    end
    if not holder then
      local k = #fresh + 1
      fresh[k], fresh_at[k] = record, i
      if claim then
        local job = {record = record, waiting = true, unique_for = push.unique_for}
        fresh_holder[k] = job
        holders[claim] = job
      end
    end
  end
end

local fields, duplicates, merged = {}, {}, {}
local next_seq = 0
local fresh_count = digits(#fresh)
if #fresh > 0 then next_seq = rcall('HINCRBY', stats, 'seq', fresh_count) - #fresh + 1 end
-- Per name made ready: {best priority, its first member, per priority the members in push
-- order}.
local by_name, ready_names = {}, {}
local added, names_in_batch = {}, {}  -- per name: {ready = n, scheduled = n, running = n}
local records, due_jobs, earliest_due = batched('HSET'), batched('ZADD'), nil
local deadlines, taken = inflight_deadlines(inflight), {}  -- taken: {position, record, ...}

-- Whether the queue of `name` holds no ready job of priority `p` (its digits) or better.
local function none_ready_by(name, p)
  return #rcall('ZRANGEBYSCORE', ready_prefix .. name, '-inf', p, 'LIMIT', '0', '1') == 0
end

-- Whether a plain job asked to be taken (asked_to_take) may skip the queue: nothing of its name
-- at its priority or better ready here, before this batch or earlier in it (those join their
-- lists after this loop).
local function may_take(name, priority)
  local r = by_name[name]
  return not (r and r[1] <= priority) and none_ready_by(name, digits(priority))
end
-- The fields of consecutive seqs share their first eight characters, their record bucket, 62 at
-- a time: base62 and record_at once per bucket, and per job only its last character.
local seq_prefix, seq_bucket
local function next_field()
  local d = next_seq % 62
  if d == 0 or not seq_prefix then
    local field = base62(next_seq)
    seq_prefix = string.sub(field, 1, 8)
    seq_bucket = jobs .. seq_prefix
  end
  next_seq = next_seq + 1
  local slot = string.char(d + (d < 10 and 48 or d < 36 and 55 or 61))
  return seq_prefix .. slot, seq_bucket, slot
end
for k, entry in ipairs(fresh) do
  local field, bucket, slot = next_field()
  fields[fresh_at[k] + 1] = field
  local name, priority, state, blocked_by, packed
  if type(entry) == 'number' then
    name, priority = ARGV[entry], tonumber(ARGV[entry + P_PRIORITY])
    state, blocked_by = S_QUEUED, ''
    local asked = asked_to_take(fresh_at[k], entry)
    if asked and may_take(name, priority) then
      state = S_RUNNING
      packed = ARGV[entry + P_RECORD]
      deadlines.add(digits(now + tonumber(ARGV[entry + P_TIMEOUT])), field)
      taken[#taken + 1] = fresh_at[k]
      taken[#taken + 1] = packed
    elseif asked then
      packed = queued_plain(entry)
    else
      packed = ARGV[entry + P_RECORD]
    end
  else
    local record, job = entry, fresh_holder[k]
    if job and job.merge then job.merge.finish() end
    name, priority = record[R_NAME], record[R_PRIORITY]
    local ready_at, ordering_key = record[R_READY_AT_MS], record[R_ORDERING_KEY]
    if job then
      job.field = field
      rcall('SET', unique_claim(unique_prefix, name, record[R_UNIQUE_KEY], ordering_key), field,
            'PX', job.unique_for)
    end
    if ordering_key ~= '' and rcall('RPUSH', order_prefix .. ordering_key, field) > 1 then
      record[R_BLOCKED_BY] = 'ordering_key'
    elseif ready_at > now then
      record[R_STATE] = S_SCHEDULED
      due_jobs.add(scheduled, ready_at, field)
      if not earliest_due or ready_at < earliest_due then earliest_due = ready_at end
    end
    state, blocked_by, packed = record[R_STATE], record[R_BLOCKED_BY], pack_record(record)
  end
  records.add(bucket, slot, packed)
  local n = added[name]
  if not n then
    n = {ready = 0, scheduled = 0, running = 0}
    added[name] = n
    names_in_batch[#names_in_batch + 1] = name
  end
  if state == S_SCHEDULED then
    n.scheduled = n.scheduled + 1
  elseif state == S_RUNNING then
    n.running = n.running + 1
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
for i = 0, count - 1 do
  local holder = duplicate_of[i]
  if holder then
    fields[i + 1] = holder.field
    duplicates[#duplicates + 1] = i
    if merged_into[i] then merged[#merged + 1] = i end
  end
end
records.send()
due_jobs.send()
deadlines.send()
local heads = {}  -- the names whose best pushed job is their queue's new head
for _, name in ipairs(ready_names) do
  local queue = ready_prefix .. name
  local best = by_name[name]
  if none_ready_by(name, digits(best[1])) then heads[#heads + 1] = name end
  for priority, members in pairs(best[3]) do make_ready(queue, priority, members) end
end
for _, name in ipairs(names_in_batch) do
  rcall('SADD', names, name)
  for kind, n in pairs(added[name]) do
    if n > 0 then count_add(counts, kind, name, n) end
  end
end
if #fresh > 0 then rcall('HINCRBY', stats, 'pushed', fresh_count) end
if #taken > 0 then rcall('HINCRBY', stats, 'dispatched', digits(#taken / 2)) end
for _, name in ipairs(heads) do
  announce_ready(channel, shard, name, by_name[name][1], by_name[name][2])
end
if earliest_due then rcall('SPUBLISH', channel, string.format('s %d', earliest_due)) end

-- Stored jobs that took merges move to where their new values put them. A merge renews the
-- claim for the last merged push's unique_for, unless a new job has taken it over.
local k = {jobs = jobs, ready_prefix = ready_prefix, scheduled = scheduled, counts = counts}
local opts = {now_ms = now, stamp = stamp, channel = channel, shard = shard, held = holds_of(KEYS[9])}
for _, entry in ipairs(merged_stored) do
  local claim, holder = entry[1], entry[2]
  holder.merge.finish()
  settle_merged(k, opts, holder.field, holder.was, holder.record, holder.merge.retimed())
  if holders[claim] == holder then
    rcall('SET', claim, holder.field, 'PX', holder.unique_for)
  end
end
return {fields, duplicates, merged, taken}
