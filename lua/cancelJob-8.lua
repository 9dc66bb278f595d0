#!lua flags=allow-oom
--[[ cancelJob: removes a job that has not started (queued or waiting for a retry), keeping the
  shard's counts in step. A queued job's member is taken out of its ready list when it is at
  either end (a job cancelled soon after its push, or the next to run); elsewhere it stays
  (finding it would cost the list's length) and reserveJobs drops it when it comes to the front.
  A cancelled job lets go of its unique claim and its place in its ordering key's line
  (lua/lib/preamble_4_finish_for_good.lua); a job waiting there is cancelled like a queued one,
  and so is one held back by a constraint (it leaves the pair's held zset in its shard,
  lua/lib/preamble_2_unhold_here.lua; the pair's entry under {c} is corrected by its next wake).
  Memory: runs while Redis is over maxmemory (allow-oom): it removes a job.
  KEYS[1] jobs prefix of the job's shard (record buckets, see the preamble)
  KEYS[2] scheduled zset of the shard (field, score = due time)
  KEYS[3] done key of the job
  KEYS[4] counts hash of the shard (ready:<name> or scheduled:<name> -= 1)
  KEYS[5] ready prefix of the shard (the queue of name N = KEYS[5] .. N)
  KEYS[6] unique prefix of the shard (claims: lua/lib/preamble_1_unique_claim.lua)
  KEYS[7] order prefix of the shard (the line of ordering key K = KEYS[7] .. K)
  KEYS[8] held prefix of the shard (lua/lib/preamble_1_holds_of.lua)
  ARGV[1] the job's field
  ARGV[2] now (ms since the epoch)
  ARGV[3] events channel (what enter_queue announces for an ordering key's next job)
  ARGV[4] the shard (its number)
  Returns: 1 cancelled; -1 no such job; -2 running (cannot be cancelled);
           -3 already finished (dead or succeeded)
]]
local jobs, scheduled, done, counts, ready_prefix = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local field = ARGV[1]
local k = {jobs = jobs, ready_prefix = ready_prefix, scheduled = scheduled, counts = counts,
           unique = KEYS[6], order = KEYS[7]}
local opts = {now_ms = tonumber(ARGV[2]), channel = ARGV[3], shard = ARGV[4]}
local record = load_record(jobs, field)
if not record then
  if rcall('EXISTS', done) == 1 then return -3 end
  return -1
end
local state = record[R_STATE]
if state == S_RUNNING then return -2 end
if state == S_QUEUED then
  count_add(counts, 'ready', record[R_NAME], -1)
  unhold_here(holds_of(KEYS[8]), record, field)
  leave_ready(ready_prefix .. record[R_NAME], record[R_PRIORITY], record[R_READY_STAMP] .. field)
elseif state == S_SCHEDULED then
  rcall('ZREM', scheduled, field)
  count_add(counts, 'scheduled', record[R_NAME], -1)
else
  return -3
end
finish_for_good(k, opts, field, record)
rcall('HDEL', record_at(jobs, field))
return 1
