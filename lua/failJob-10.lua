#!lua flags=allow-oom
--[[ failJob: a failed attempt (a worker's failure object, or a status or body the master turned
  into one) schedules a retry after a backoff, or makes the job dead when it may not retry
  (should_retry false, or attempts > max_retry). Fenced by the attempt like completeJobs.
  See fail_running (lib/preamble_2_fail_running.lua) for the transition, shared with reapJobs.
  Memory: runs while Redis is over maxmemory (allow-oom): the job keeps its record (with the
          failure, at most limits.max_result_bytes) and moves between sets; refusing would make it
          run again.
  KEYS[1] jobs prefix of the job's shard (record buckets, see the preamble)
  KEYS[2] inflight zset of the shard
  KEYS[3] scheduled zset of the shard (field, score = due ms)
  KEYS[4] dead zset of the shard (field, score = failure ms)
  KEYS[5] done prefix of the shard: the job's done key is KEYS[5] .. field (with keep_result:
          the dead record, R_RESULT = the failure), as reapJobs and completeJobs take it
  KEYS[6] counts hash of the shard (running -1; scheduled or dead +1)
  KEYS[7] stats hash of the shard (failed +1; retried or dead +1)
  KEYS[8] ready prefix of the shard (a dead job's ordering key's next job enters the queue)
  KEYS[9] unique prefix of the shard (claims: lua/lib/preamble_1_unique_claim.lua)
  KEYS[10] order prefix of the shard (the line of ordering key K = KEYS[10] .. K)
  ARGV[1] the job's field
  ARGV[2] the attempt the failure is for
  ARGV[3] the failure object (MessagePack bytes)
  ARGV[4] should_retry: 1 | 0
  ARGV[5] message (becomes the job's last_error)
  ARGV[6] now (ms since the epoch)
  ARGV[7] retry base (ms)
  ARGV[8] retry max (ms)
  ARGV[9] jitter (fraction, 0-1)
  ARGV[10] result_ttl (s)
  ARGV[11] events channel: "s <due_ms>" on a retry (promoters wake then), "r <id>" when a dead
           job's failure is kept as its result
  ARGV[12] the shard (its number: the job's id is <shard>-<field>)
  Returns: {1, due_ms} scheduled for a retry; {2} dead; {0} stale: nothing changed.
]]
local field = ARGV[1]
local record = load_running(KEYS[1], field, ARGV[2])
if not record then return {0} end
local k = {jobs = KEYS[1], inflight = KEYS[2], scheduled = KEYS[3], dead = KEYS[4],
           counts = KEYS[6], stats = KEYS[7], ready_prefix = KEYS[8], unique = KEYS[9],
           order = KEYS[10]}
local opts = {now_ms = tonumber(ARGV[6]), base_ms = tonumber(ARGV[7]),
              max_ms = tonumber(ARGV[8]), jitter = tonumber(ARGV[9]), ttl_s = ARGV[10],
              channel = ARGV[11], shard = ARGV[12]}
local job = {field = field, record = record, done = KEYS[5] .. field,
             id = ARGV[12] .. '-' .. field}
return fail_running(k, opts, job,
                    {bytes = ARGV[3], message = ARGV[5], retry = ARGV[4] == '1'})
