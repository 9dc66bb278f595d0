#!lua flags=allow-oom
--[[ releaseJob: gives back a reserved job whose attempt never really happened (the worker could
  not be reached, or answered busy): the attempt does not count and the job is ready again at
  once, at the front of its list with its old stamp, so it keeps its turn. Fenced like
  completeJobs, and by the token of the reservation that took the attempt: a release sent again
  after its answer was lost never gives back a later reservation's attempt of the same number
  (a given-back attempt is not counted, so the next one has its number). Its constraint leases
  are under {c}: the master releases them before this call (releaseLeases), so the job is never
  ready while its old lease still counts (a rate step it took stays taken). A job whose unique_until is started takes its claim back when it is still
  parked for it (parked when the attempt began, lua/lib/preamble_2_release_unique.lua; a job that
  started an attempt before let go of it at this one's start): it has not started.
  Memory: runs while Redis is over maxmemory (allow-oom): the job moves back to its ready list.
  KEYS[1] jobs prefix of the job's shard (record buckets, see the preamble)
  KEYS[2] inflight zset of the shard
  KEYS[3] the queue of the job's name (lua/lib/preamble_1_ready_list.lua)
  KEYS[4] counts hash of the shard (running:<name> -= 1, ready:<name> += 1)
  KEYS[5] unique prefix of the shard (claims: lua/lib/preamble_1_unique_claim.lua)
  ARGV[1] the job's field
  ARGV[2] the attempt being given back
  ARGV[3] events channel: gets announce_ready (the job may go to another endpoint)
  ARGV[4] the shard (its number, for the announcement)
  ARGV[5] the token of the reservation (reserveJobs, or pushJobs taking the job at once) that
          took the attempt: its R_TAKEN_BY
  Returns: 1 released; 0 stale (not running, or another attempt): nothing changed.
]]
local jobs, inflight, queue, counts = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local field = ARGV[1]
local record = load_running(jobs, field, ARGV[2])
if not record or record[R_TAKEN_BY] ~= ARGV[5] then return 0 end
local name, priority = record[R_NAME], record[R_PRIORITY]
local member = record[R_READY_STAMP] .. field
record[R_STATE] = S_QUEUED
record[R_ATTEMPTS] = record[R_ATTEMPTS] - 1
record[R_TAKEN_BY] = ''
restore_unique(KEYS[5], record, field)
save_record(jobs, field, record)
rcall('ZREM', inflight, field)
make_ready(queue, priority, {member}, true)
count_add(counts, 'running', name, -1)
count_add(counts, 'ready', name, 1)
announce_ready(ARGV[3], ARGV[4], name, priority, member)
return 1
