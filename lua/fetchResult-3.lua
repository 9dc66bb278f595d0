#!lua flags=allow-oom
--[[ fetchResult: hands a finished job's kept result to the pusher exactly once. A pusher about
  to wait for a result that is not stored yet says so (ARGV[2]): the job's watch key then
  exists, and completeJobs announces the result when it stores it (only then: a result nobody
  waits for costs no message). Watching and looking are one step, so a result is either handed
  out here or announced later, never neither.
  Memory: runs while Redis is over maxmemory (allow-oom): it deletes the result it hands over;
          a watch key is a few bytes that expire with the wait.
  KEYS[1] jobs prefix of the job's shard (record buckets, see the preamble)
  KEYS[2] done key of the job (finished record, R_RESULT = the result object)
  KEYS[3] watch key of the job (exists while a pusher waits for its result; counts the polls
          that started waiting, so that a master handing the result to its own poll knows
          whether polls elsewhere wait too)
  ARGV[1] the job's field
  ARGV[2] watch (ms): when the job is pending with keep_result, its watch key lives at least
          this long from now; 0: no one waits
  Returns: {1, result}           the result (MessagePack bytes); the done key is deleted
           {2, state, attempts, keep_result (0|1)}
                                 the job is still queued, scheduled or running (a long poll
                                 of a job with keep_result 0 looks again now and then: only
                                 a kept result is announced)
           {0}                   nothing to give: unknown, fetched already, expired, or not kept
]]
local jobs, done, watch = KEYS[1], KEYS[2], KEYS[3]
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
    local watch_ms = tonumber(ARGV[2])
    if watch_ms > 0 and record[R_KEEP_RESULT] == 1 then
      -- Another waiter's longer watch is kept (PTTL is -2 when there is none; INCR keeps it).
      local left = rcall('PTTL', watch)
      rcall('INCR', watch)
      if left < watch_ms then rcall('PEXPIRE', watch, ARGV[2]) end  -- its digits, as given
    end
    return {2, state, record[R_ATTEMPTS], record[R_KEEP_RESULT]}
  end
end
return {0}
