--[[ releaseJob: gives back a reserved job whose attempt never really happened (the worker could
  not be reached, or answered busy): the attempt does not count and the job is ready again at
  once, in the place it had (its R_READY_MEMBER), so it keeps its turn. Fenced like completeJobs.
  KEYS[1] jobs hash of the job's shard
  KEYS[2] inflight zset of the shard
  KEYS[3] ready zset of the job's name
  KEYS[4] counts hash of the shard (running:<name> -= 1)
  ARGV[1] the job's field
  ARGV[2] the attempt being given back
  ARGV[3] events channel: gets announce_ready (the job may go to another endpoint)
  ARGV[4] the shard (its number, for the announcement)
  Returns: 1 released; 0 stale (not running, or another attempt): nothing changed.
]]
local jobs, inflight, ready, counts = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local field = ARGV[1]
local record = load_running(jobs, field, ARGV[2])
if not record then return 0 end
record[R_STATE] = S_QUEUED
record[R_ATTEMPTS] = record[R_ATTEMPTS] - 1
save_record(jobs, field, record)
rcall('ZREM', inflight, field)
rcall('ZADD', ready, record[R_PRIORITY], record[R_READY_MEMBER])
count_add(counts, 'running', record[R_NAME], -1)
announce_ready(ARGV[3], ARGV[4], record[R_NAME], record[R_PRIORITY], record[R_READY_MEMBER])
return 1
