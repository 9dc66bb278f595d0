--[[ cancelJob: removes a job that has not started (queued or waiting for a retry), keeping the
  shard's counts in step. A queued job's member is taken out of its ready list when it is at
  either end (a job cancelled soon after its push, or the next to run); elsewhere it stays
  (finding it would cost the list's length) and reserveJobs drops it when it comes to the front.
  KEYS[1] jobs prefix of the job's shard (record buckets, see the preamble)
  KEYS[2] scheduled zset of the shard (field, score = due time)
  KEYS[3] done key of the job
  KEYS[4] counts hash of the shard (ready:<name> or scheduled:<name> -= 1)
  KEYS[5] ready prefix of the shard (the queue of name N = KEYS[5] .. N)
  ARGV[1] the job's field
  Returns: 1 cancelled; -1 no such job; -2 running (cannot be cancelled);
           -3 already finished (dead or succeeded)
]]
local jobs, scheduled, done, counts, ready_prefix = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local field = ARGV[1]
local record = load_record(jobs, field)
if not record then
  if rcall('EXISTS', done) == 1 then return -3 end
  return -1
end
local state = record[R_STATE]
if state == S_RUNNING then return -2 end
if state == S_QUEUED then
  count_add(counts, 'ready', record[R_NAME], -1)
  local queue, priority = ready_prefix .. record[R_NAME], record[R_PRIORITY]
  local list, member = ready_list(queue, priority), record[R_READY_STAMP] .. field
  if rcall('LINDEX', list, 0) == member then
    rcall('LPOP', list)
  elseif rcall('LINDEX', list, -1) == member then
    rcall('RPOP', list)
  end
  if rcall('EXISTS', list) == 0 then rcall('ZREM', queue, priority) end
elseif state == S_SCHEDULED then
  rcall('ZREM', scheduled, field)
  count_add(counts, 'scheduled', record[R_NAME], -1)
else
  return -3
end
rcall('HDEL', record_at(jobs, field))
return 1
