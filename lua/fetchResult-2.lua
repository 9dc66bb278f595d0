#!lua flags=allow-oom
--[[ fetchResult: hands a finished job's kept result to the pusher exactly once.
  Memory: runs while Redis is over maxmemory (allow-oom): it deletes the result it hands over.
  KEYS[1] jobs prefix of the job's shard (record buckets, see the preamble)
  KEYS[2] done key of the job (finished record, R_RESULT = the result object)
  ARGV[1] the job's field
  Returns: {1, result}           the result (MessagePack bytes); the done key is deleted
           {2, state, attempts, keep_result (0|1)}
                                 the job is still queued, scheduled or running (a long poll
                                 waits only when keep_result is 1: nothing else gets stored)
           {0}                   nothing to give: unknown, fetched already, expired, or not kept
]]
local jobs, done = KEYS[1], KEYS[2]
local raw = rcall('GET', done)
if raw then
  rcall('DEL', done)
  local record = cmsgpack.unpack(raw)
  return {1, record[R_RESULT]}
end
local record = load_record(jobs, ARGV[1])
if record then
  local state = record[R_STATE]
  if state == S_QUEUED or state == S_SCHEDULED or state == S_RUNNING then
    return {2, state, record[R_ATTEMPTS], record[R_KEEP_RESULT]}
  end
end
return {0}
