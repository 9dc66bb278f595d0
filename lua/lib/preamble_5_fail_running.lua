-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ The transition of a running job whose current attempt failed, shared by failJob (a
  worker's failure) and reapJobs (an attempt past its deadline): scheduled for a retry after a
  backoff when the failure asks for one and retries are left (attempts <= max_retry), else dead.
  A dead job's record stays in its bucket (the dead list reads it) with the failure object
  as its result; with keep_result a copy also goes to its done key for the pusher. A dead job
  lets go of its unique claim and its ordering key (lua/lib/preamble_4_finish_for_good.lua); a
  retry keeps both, so the next job of its key still waits. The attempt's constraint leases are
  the master's to release (releaseLeases, under {c}).
  The caller has checked that `job.record` is the running record of `job.field`.
  k       keys of the job's shard: {jobs, inflight, scheduled, dead, counts, stats, ready_prefix,
          unique, order}
  opts    {now_ms, base_ms, max_ms, jitter, ttl_s, channel, shard}
  job     {field, record, done (the job's done key), id}
  failure {bytes (result object, MessagePack), message (-> R_LAST_ERROR), retry (boolean)}
  Returns {1, due_ms} when scheduled, {2} when dead.
]]
local function fail_running(k, opts, job, failure)
  local field, record = job.field, job.record
  local name, attempts = record[R_NAME], record[R_ATTEMPTS]
  record[R_LAST_ERROR] = failure.message
  rcall('ZREM', k.inflight, field)
  count_add(k.counts, 'running', name, -1)
  rcall('HINCRBY', k.stats, 'failed', '1')
  if failure.retry and attempts <= record[R_MAX_RETRY] then
    local due = opts.now_ms + backoff_ms(attempts, opts.base_ms, opts.max_ms, opts.jitter)
    record[R_STATE] = S_SCHEDULED
    record[R_READY_AT_MS] = due
    record[R_TAKEN_BY] = ''
    save_record(k.jobs, field, record)
    rcall('ZADD', k.scheduled, due, field)
    count_add(k.counts, 'scheduled', name, 1)
    rcall('HINCRBY', k.stats, 'retried', '1')
    rcall('SPUBLISH', opts.channel, string.format('s %d', due))
    return {1, due}
  end
  record[R_STATE] = S_DEAD
  record[R_RESULT] = failure.bytes
  local packed = save_record(k.jobs, field, record)
  rcall('ZADD', k.dead, opts.now_ms, field)
  count_add(k.counts, 'dead', name, 1)
  rcall('HINCRBY', k.stats, 'dead', '1')
  if record[R_KEEP_RESULT] == 1 then
    rcall('SET', job.done, packed, 'EX', opts.ttl_s)
    rcall('SPUBLISH', opts.channel, 'r ' .. job.id)
  end
  finish_for_good(k, opts, field, record)
  return {2}
end
