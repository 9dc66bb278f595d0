#!lua flags=allow-oom
--[[ reapJobs: fails attempts whose deadline passed without an answer, as timeouts: exactly the
  failJob transition with should_retry, so the job retries or dies as a worker's timeout would
  make it. This is how jobs of a master that died are recovered; any number of masters may run
  it at once (each job is reaped once: it leaves inflight in the same step). The reaped
  attempts of constrained jobs are returned: the master releases their leases (releaseLeases),
  which are past their deadlines already but may hold jobs back that wait for a release.
  Memory: runs while Redis is over maxmemory (allow-oom): as failJob: the jobs keep their records
          and move between sets.
  KEYS[1] jobs prefix of the shard (record buckets, see the preamble)
  KEYS[2] inflight zset of the shard (field, score = deadline ms)
  KEYS[3] scheduled zset of the shard
  KEYS[4] dead zset of the shard
  KEYS[5] done prefix of the shard (done key of field F = KEYS[5] .. F)
  KEYS[6] counts hash of the shard
  KEYS[7] stats hash of the shard
  KEYS[8] ready prefix of the shard (a dead job's ordering key's next job enters the queue)
  KEYS[9] unique prefix of the shard (claims: lua/lib/preamble_1_unique_claim.lua)
  KEYS[10] order prefix of the shard (the line of ordering key K = KEYS[10] .. K)
  ARGV[1] cutoff (ms since the epoch): attempts with a deadline before it are reaped (the
          caller leaves a grace after the deadline for answers already on their way)
  ARGV[2] now (ms since the epoch)
  ARGV[3] max: the most jobs to reap
  ARGV[4] the timeout failure object (MessagePack bytes), the same for every job reaped
  ARGV[5] its message (becomes last_error)
  ARGV[6] retry base (ms)
  ARGV[7] retry max (ms)
  ARGV[8] jitter (fraction, 0-1)
  ARGV[9] result_ttl (s)
  ARGV[10] events channel (as failJob publishes)
  ARGV[11] the shard's number (a job's id is "<shard>-<field>")
  Returns: {reaped, lease1, constraints1, lease2, constraints2, ...}: the number of jobs reaped
           (an in-flight field without a running record is removed and not counted), then per
           reaped job that matched constraints its attempt's lease ("<shard>-<field>:<attempt>")
           and its constraints (MessagePack, as R_CONSTRAINTS holds them).
]]
local k = {jobs = KEYS[1], inflight = KEYS[2], scheduled = KEYS[3], dead = KEYS[4],
           counts = KEYS[6], stats = KEYS[7], ready_prefix = KEYS[8], unique = KEYS[9],
           order = KEYS[10]}
local done_prefix, shard = KEYS[5], ARGV[11]
local opts = {now_ms = tonumber(ARGV[2]), base_ms = tonumber(ARGV[6]),
              max_ms = tonumber(ARGV[7]), jitter = tonumber(ARGV[8]), ttl_s = ARGV[9],
              channel = ARGV[10], shard = ARGV[11]}
local failure = {bytes = ARGV[4], message = ARGV[5], retry = true}

local expired = rcall('ZRANGEBYSCORE', k.inflight, '-inf', '(' .. ARGV[1], 'LIMIT', '0', ARGV[3])
local out = {0}
for _, field in ipairs(expired) do
  local record = load_record(k.jobs, field)
  if record and record[R_STATE] == S_RUNNING then
    local job = {field = field, record = record, done = done_prefix .. field,
                 id = shard .. '-' .. field}
    fail_running(k, opts, job, failure)
    out[1] = out[1] + 1
    if record[R_CONSTRAINTS] then
      out[#out + 1] = job.id .. ':' .. record[R_ATTEMPTS]
      out[#out + 1] = cmsgpack.pack(record[R_CONSTRAINTS])
    end
  else
    rcall('ZREM', k.inflight, field)
  end
end
return out
