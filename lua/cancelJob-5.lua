--[[ cancelJob: removes a job that has not started (queued or waiting for a retry), keeping the
  shard's counts in step (a cancelled retry no longer counts as scheduled).
  KEYS[1] jobs hash of the job's shard
  KEYS[2] scheduled zset of the shard (field, score = due time)
  KEYS[3] ready-queue prefix of the shard (ready zset of name N = KEYS[3] .. N)
  KEYS[4] done key of the job
  KEYS[5] counts hash of the shard (scheduled:<name> -= 1 when a scheduled job is cancelled)
  ARGV[1] the job's field
  Returns: 1 cancelled; -1 no such job; -2 running (cannot be cancelled);
           -3 already finished (dead or succeeded)
]]
local jobs, scheduled, ready_prefix, done, counts = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local field = ARGV[1]
local record = load_record(jobs, field)
if not record then
  if rcall('EXISTS', done) == 1 then return -3 end
  return -1
end
local state = record[R_STATE]
if state == S_RUNNING then return -2 end
if state == S_QUEUED then
  rcall('ZREM', ready_prefix .. record[R_NAME], record[R_READY_MEMBER])
elseif state == S_SCHEDULED then
  rcall('ZREM', scheduled, field)
  count_add(counts, 'scheduled', record[R_NAME], -1)
else
  return -3
end
rcall('HDEL', jobs, field)
return 1
