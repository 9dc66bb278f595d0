#!lua flags=allow-oom
--[[ reserveJobs: hands the best ready jobs of one name to a dispatcher, moving them to in-flight
  with their deadline and counting the attempt, all in one step (a job is never only in a
  master's memory). The scheduler compared the heads of several queues and bounds the batch by
  the next-best head elsewhere, so it does not take jobs that another queue should go first for.
  A queued job keeps its R_READY_STAMP: releaseJob puts it back at the front with it. With
  max 0 nothing is taken: the call only reads the queue's head (dropping stale members there).
  A job that matched constraints waits behind the jobs its pairs already hold in this shard: if
  one of its pairs holds an older job here, it is held at once (lua/lib/preamble_1_hold_here.lua)
  and the jobs behind it are taken instead, so a limited key never blocks the others. Otherwise
  it is admitted or held in this same step when one Redis holds every key (KEYS[8] and KEYS[9]
  given: lua/lib/preamble_4_admit_job.lua; a refused job is held here at once, with no attempt
  used). On a cluster, where {c} lives in another slot, it is taken like any job, as a
  candidate: the master asks admitJobs (under {c}) whether all its constraints let it start, and
  holdJobs gives back the ones they do not (no attempt used); its unique claim (unique_until
  started) stays until it is admitted (holdJobs).
  Memory: runs while Redis is over maxmemory (allow-oom): jobs move from ready lists to the
          inflight set and their records change in place; dispatching the jobs already stored is
          how memory comes back.
  KEYS[1] jobs prefix of the shard (record buckets, see the preamble)
  KEYS[2] inflight zset of the shard (field, score = deadline ms)
  KEYS[3] the queue of the name (its priorities zset; lists at KEYS[3] .. '#' .. priority)
  KEYS[4] counts hash of the shard (ready:<name> -= and running:<name> += jobs taken)
  KEYS[5] stats hash of the shard (dispatched += jobs taken)
  KEYS[6] unique prefix of the shard: a job with unique_until started gives up its claim
          (lua/lib/preamble_1_unique_claim.lua) when its first attempt is taken
  KEYS[7] held prefix of the shard: its jobs held back by constraints
          (lua/lib/preamble_1_holds_of.lua)
  KEYS[8] constraint defs: the definitions hash (name -> MessagePack); only when one Redis holds
          every key (not on a cluster): then jobs are admitted here
  KEYS[9] constraint state prefix (lua/lib/preamble_1_constraint_context.lua); with KEYS[8]
  ARGV[1] now (ms since the epoch); deadline = now + the job's timeout
  ARGV[2] max: the most jobs to take (>= 0)
  ARGV[3] bound priority, "" for no bound
  ARGV[4] bound member: only jobs that sort before (ARGV[3], ARGV[4]) are taken; the bound itself
          is not. Within a priority the list's order rules; the bound is compared with the
          members from the front, and taking stops at the first that is not before it.
  ARGV[5] the name (of KEYS[3])
  ARGV[6] the shard (its number: leases are named "<shard>-<field>:<attempt>")
  ARGV[7] the {c} events channel: "s <due_ms>" when a pair's rate holds jobs until then (with
          KEYS[8])
  ARGV[8] token of this call, unique to it: each job taken keeps it in R_TAKEN_BY while it runs,
          so that if this answer is lost the master finds them (lua/findReserved-2.lua)
  Returns: {head_member, head_priority, ready, field1, record1, field2, record2, ...}: the
           queue's head after the reservation ('' and '' when it is empty), which the scheduler
           keeps instead of reading it again; how many members wait in its lists (those of its
           8 best priorities; 0 when empty), which tells the scheduler how many more
           reservations may follow this one; then the jobs taken in ready order, records
           (MessagePack) as stored after the update (without KEYS[8], a record with
           constraints is a candidate for admitJobs); no jobs when nothing is ready within the
           bound.
]]
local jobs, inflight, queue, counts, stats = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local unique_prefix = KEYS[6]
local now, max = tonumber(ARGV[1]), tonumber(ARGV[2])
local bound_priority, bound_member = tonumber(ARGV[3]), ARGV[4]
local name, shard, token = ARGV[5], ARGV[6], ARGV[8]
local h = holds_of(KEYS[7])
-- Admission in this step: one Redis holds the constraints' state too.
local ad = KEYS[8] and {cx = constraint_context(KEYS[8], KEYS[9], now, true), channel = ARGV[7],
                        started = {}}
-- Jobs held back, and of those the ones refused by admission here (each a full look at its
-- pairs), per call at most, so one call stays short however many wait there; the rest go in
-- later calls (queue_head bounds the stale members it drops likewise).
local max_held, max_refused = 1000, 200
local held, refusals = 0, 0

-- The record of a member's job if it is queued with the member's stamp, loaded without its
-- argument (with what load_record_without_argument gives besides, for pack_loaded_record); nil
-- for the stale member of a cancelled job.
local function queued_record(member)
  local record, raw, from, to = load_record_without_argument(jobs, string.sub(member, 10))
  if record and record[R_STATE] == S_QUEUED and record[R_READY_STAMP] == string.sub(member, 1, 9)
  then
    return record, raw, from, to
  end
  return nil
end

-- The index in `cons` of a pair that holds a job ahead of (stamp, field) in this shard; nil if
-- none. Jobs of one push share a stamp, and their fields, in push order, break the tie (as in
-- the ready lists and the held zsets). Asked without scores in the answer (Redis 7.0 writes
-- each with %.17g, which costs more than the lookup): the first member at or before the stamp
-- is ahead when its field sorts before ours; when it sorts after, only a member strictly before
-- the stamp is.
local function older_held_here(cons, stamp_s, field)
  for i = 1, #cons, 2 do
    local held = h.held .. cons[i] .. '#' .. cons[i + 1]
    local first = rcall('ZRANGEBYSCORE', held, '-inf', stamp_s, 'LIMIT', '0', '1')[1]
    if first and (bytes_less(first, field) or
                  rcall('ZRANGEBYSCORE', held, '-inf', '(' .. stamp_s, 'LIMIT', '0', '1')[1]) then
      return i
    end
  end
  return nil
end

local out, taken = {'', '', 0}, 0
local records, deadlines, seen = batched('HSET'), inflight_deadlines(inflight), {}

-- Holds the queued job back for the pair (by, key) in this shard; its record (as queued_record
-- loaded it: record, raw, from, to) is written with the others after the loop.
local function hold(field, record, raw, from, to, by, key, stamp)
  seen[field] = true
  hold_here(h, by, key, field, stamp)
  record[R_BLOCKED_BY] = by
  local bucket, slot = record_at(jobs, field)
  records.add(bucket, slot, pack_loaded_record(record, raw, from, to))
  held = held + 1
end

local max_score = bound_priority or '+inf'
while taken < max and held < max_held and refusals < max_refused do
  local best = rcall('ZRANGEBYSCORE', queue, '-inf', max_score, 'LIMIT', '0', '1')
  if #best == 0 then break end
  local priority, list = best[1], ready_list(queue, best[1])
  local members = rcall('LRANGE', list, '0', digits(max - taken - 1))
  local n = #members
  local at_bound = tonumber(priority) == bound_priority
  if at_bound then
    n = 0
    while n < #members and bytes_less(members[n + 1], bound_member) do n = n + 1 end
  end
  if n > 0 then rcall('LTRIM', list, digits(n), '-1') end
  for i = 1, n do
    local field = string.sub(members[i], 10)
    local record, raw, from, to = queued_record(members[i])
    -- Records are written after the loop: a job whose member came twice is taken once.
    local fresh = record and not seen[field]
    local deadline = fresh and digits(now + record[R_TIMEOUT_MS])
    local cons = fresh and record[R_CONSTRAINTS]
    if cons then
      local stamp = digits(base62_decode(record[R_READY_STAMP]))
      local behind = older_held_here(cons, stamp, field)
      if behind then
        hold(field, record, raw, from, to, cons[behind], cons[behind + 1], stamp)
      elseif ad then
        local lease = string.format('%s-%s:%d', shard, field, record[R_ATTEMPTS] + 1)
        local refused = admit_job(ad, shard, lease, stamp, deadline, cons)
        if refused > 0 then
          hold(field, record, raw, from, to, cons[2 * refused - 1], cons[2 * refused],
               stamp)
          refusals = refusals + 1
        end
      end
    end
    if record and not seen[field] then
      seen[field] = true
      record[R_STATE] = S_RUNNING
      record[R_ATTEMPTS] = record[R_ATTEMPTS] + 1
      record[R_TAKEN_BY] = token
      -- A candidate keeps its claim until admitJobs admitted it (holdJobs lets it go). Not only
      -- at the first attempt: a candidate whose admission was lost is reaped and comes back
      -- holding it.
      if record[R_UNIQUE_UNTIL] == 1 and (ad or not cons) then
        start_unique(unique_prefix, record, field)
      end
      local packed = pack_loaded_record(record, raw, from, to)
      local bucket, slot = record_at(jobs, field)
      records.add(bucket, slot, packed)
      deadlines.add(deadline, field)
      out[#out + 1] = field
      out[#out + 1] = packed
      taken = taken + 1
    end
  end
  forget_if_empty(queue, priority)
  -- Done when the bound stopped it, or the list had no more than was asked for and none was
  -- stale (then `taken` reached max); otherwise the next round reads on.
  if at_bound and n < #members then break end
end
records.send()
deadlines.send()
if ad then admitted_counts(ad) end

-- The head after it, stale members dropped on the way.
out[1], out[2] = queue_head(jobs, queue)
-- Not the counts hash: it counts the jobs held by constraints as ready, and they are not in the
-- lists. A cancelled job's member not yet dropped counts here. The first 8 priorities' lists
-- only, so the count stays a few commands however many priorities wait.
if out[2] ~= '' then
  local waiting = 0
  for _, p in ipairs(rcall('ZRANGE', queue, '0', '7')) do
    waiting = waiting + rcall('LLEN', ready_list(queue, p))
  end
  out[3] = waiting
end
if taken > 0 then
  count_add(counts, 'ready', name, -taken)
  count_add(counts, 'running', name, taken)
  rcall('HINCRBY', stats, 'dispatched', digits(taken))
end
return out
