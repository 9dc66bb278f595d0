--[[ completeJob: a worker's success ends the job. Fenced by the attempt: an answer for an attempt
  that was already given up on (reaped, released) or for a job no longer running changes nothing,
  so a late answer cannot finish a job that runs again elsewhere.
  KEYS[1] jobs hash of the job's shard
  KEYS[2] inflight zset of the shard
  KEYS[3] done key of the job (with keep_result: the finished record, R_RESULT = the result)
  KEYS[4] counts hash of the shard (running:<name> -= 1)
  KEYS[5] stats hash of the shard (succeeded += 1)
  ARGV[1] the job's field
  ARGV[2] the attempt the answer is for (as reserveJobs counted it)
  ARGV[3] the result object (MessagePack bytes, as the worker sent it)
  ARGV[4] result_ttl (s): how long a kept result waits to be fetched
  ARGV[5] events channel: gets "r <id>" when a result is kept, to wake long-polling fetchers
  ARGV[6] the job's id
  Returns: 1 done; 0 stale (not running, or another attempt): nothing changed.
]]
local jobs, inflight, done, counts, stats = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local field = ARGV[1]
local record = load_running(jobs, field, ARGV[2])
if not record then return 0 end
rcall('ZREM', inflight, field)
rcall('HDEL', jobs, field)
count_add(counts, 'running', record[R_NAME], -1)
rcall('HINCRBY', stats, 'succeeded', 1)
if record[R_KEEP_RESULT] == 1 then
  record[R_STATE] = S_SUCCEEDED
  record[R_RESULT] = ARGV[3]
  rcall('SET', done, cmsgpack.pack(record), 'EX', ARGV[4])
  rcall('PUBLISH', ARGV[5], 'r ' .. ARGV[6])
end
return 1
