#!lua flags=allow-oom
--[[ deleteDeadJob: an operator removes a dead job for good. A kept result already in its done
  key is left to be fetched or to expire.
  Memory: runs while Redis is over maxmemory (allow-oom): it removes a job.
  KEYS[1] jobs prefix of the job's shard (record buckets, see the preamble)
  KEYS[2] dead zset of the shard
  KEYS[3] counts hash of the shard (dead:<name> -= 1)
  ARGV[1] the job's field
  Returns: 1 deleted; -1 no dead job with that field: nothing changed.
]]
local jobs, dead, counts = KEYS[1], KEYS[2], KEYS[3]
local field = ARGV[1]
local record = load_record(jobs, field)
if not record or record[R_STATE] ~= S_DEAD then return -1 end
rcall('ZREM', dead, field)
rcall('HDEL', record_at(jobs, field))
count_add(counts, 'dead', record[R_NAME], -1)
return 1
