#!lua flags=allow-oom
--[[ holdJobs: applies in a shard what admitJobs decided (under {c}) for the candidates a
  reservation took. A refused job gives back its attempt: it is queued again, out of in-flight,
  and waits in the held zset of the pair that refused it (lua/lib/preamble_1_hold_here.lua), with
  R_BLOCKED_BY naming the constraint: it used no attempt and keeps its ready stamp, so it wakes
  in its turn. An admitted job with unique_until started gives up (parks) its unique claim now,
  as reserveJobs does for jobs without constraints. Fenced by the attempt
  like completeJobs: a job whose attempt was meanwhile reaped is left as it is.
  Each refused job (stale or not) counts once in the shard's settled hash under its pair, which
  unholdJobs reports, so ackWake can tell whether every refusal {c} counted has landed here.
  Memory: runs while Redis is over maxmemory (allow-oom): jobs move from in-flight back to
          waiting; nothing grows but the held zset by the jobs that leave in-flight.
  KEYS[1] jobs prefix of the shard (record buckets, see the preamble)
  KEYS[2] inflight zset of the shard
  KEYS[3] counts hash of the shard (a refused job: running:<name> -= 1, ready:<name> += 1)
  KEYS[4] stats hash of the shard (dispatched -= 1 per refused job)
  KEYS[5] unique prefix of the shard (claims: lua/lib/preamble_1_unique_claim.lua)
  KEYS[6] held prefix of the shard (lua/lib/preamble_1_holds_of.lua)
  ARGV[1..] four per job: field, the attempt reserveJobs counted, and the constraint and key
            (as in the job's R_CONSTRAINTS) of the pair that refused it; '' and '' for a job
            admitted (only its unique claim is looked at)
  Returns: one integer per job, in order: 1 done; 0 stale (not running that attempt): nothing
           changed for that job.
]]
local jobs, inflight, counts, stats, unique_prefix = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local h = holds_of(KEYS[6])
local out, refused = {}, 0
for a = 1, #ARGV, 4 do
  local field, name, key = ARGV[a], ARGV[a + 2], ARGV[a + 3]
  local record = load_running(jobs, field, ARGV[a + 1])
  if name ~= '' then rcall('HINCRBY', h.settled, name .. '#' .. key, '1') end
  if not record then
    out[#out + 1] = 0
  elseif name == '' then
    if record[R_UNIQUE_UNTIL] == 1 then start_unique(unique_prefix, record, field) end
    out[#out + 1] = 1
  else
    record[R_STATE] = S_QUEUED
    record[R_ATTEMPTS] = record[R_ATTEMPTS] - 1
    record[R_BLOCKED_BY] = name
    record[R_TAKEN_BY] = ''
    save_record(jobs, field, record)
    rcall('ZREM', inflight, field)
    hold_here(h, name, key, field, base62_decode(record[R_READY_STAMP]))
    count_add(counts, 'running', record[R_NAME], -1)
    count_add(counts, 'ready', record[R_NAME], 1)
    refused = refused + 1
    out[#out + 1] = 1
  end
end
if refused > 0 then rcall('HINCRBY', stats, 'dispatched', -refused) end
return out
