#!lua flags=allow-oom
--[[ completeJobs: workers' successes end their jobs; a batch of jobs of one shard in one call
  (the dispatcher gathers the answers that arrive while the previous call is on its way), each
  job's transition on its own. Fenced by the attempt: an answer for an attempt that was already
  given up on (reaped, released) or for a job no longer running changes nothing, so a late
  answer cannot finish a job that runs again elsewhere. A finished job lets go of its unique
  claim and of its ordering key, whose next job enters the queue
  (lua/lib/preamble_4_finish_for_good.lua). Its constraint leases are under {c}: when one Redis
  holds every key (KEYS[11] to KEYS[13] given) they go in this same step, and the slots they free
  are handed to held jobs in it too (lua/lib/preamble_4_free_leases.lua, then
  lua/lib/preamble_5_run_wakes.lua). On a cluster the master releases them beside this call
  (releaseLeases).
  Memory: runs while Redis is over maxmemory (allow-oom): it ends running jobs and frees their
          running state; a kept result adds at most limits.max_result_bytes per job, and refusing
          would make finished jobs run again.
  KEYS[1] jobs prefix of the shard (record buckets, see the preamble)
  KEYS[2] inflight zset of the shard
  KEYS[3] done prefix of the shard: a job's done key is KEYS[3] .. field (with
          keep_result: the finished record, R_RESULT = the result)
  KEYS[4] counts hash of the shard (running:<name> -= 1 per job)
  KEYS[5] stats hash of the shard (succeeded += 1 per job)
  KEYS[6] ready prefix of the shard (the queue of name N = KEYS[6] .. N)
  KEYS[7] scheduled zset of the shard (an ordering key's next job may still wait for its delay)
  KEYS[8] unique prefix of the shard (claims: lua/lib/preamble_1_unique_claim.lua)
  KEYS[9] order prefix of the shard (the line of ordering key K = KEYS[9] .. K)
  KEYS[10] watch prefix of the shard: a job's watch key is KEYS[10] .. field, set by fetchResult
          while a pusher waits for its result (how many polls started waiting)
  KEYS[11] constraint defs: the definitions hash (name -> MessagePack); only when one Redis
          holds every key (not on a cluster): then the jobs' leases are released here
  KEYS[12] constraint state prefix (lua/lib/preamble_1_constraint_context.lua); with KEYS[11]
  KEYS[13] held prefix of the shard (lua/lib/preamble_1_holds_of.lua); with KEYS[11]
  ARGV[1] result_ttl (s): how long a kept result waits to be fetched
  ARGV[2] events channel: gets "r <id>" when a result is kept and its job is watched (the watch
          key is deleted), to wake long-polling fetchers, and what enter_queue announces for an
          ordering key's next job
  ARGV[3] the shard (its number: ids are <shard>-<field>)
  ARGV[4] now (ms since the epoch)
  ARGV[5] constraint channel: the {c} events channel, "s <due_ms>" when a pair is due again
          (with KEYS[11]: a hand-off longer than one call goes on in wakeConstraints)
  ARGV[6..] four per job: field, the attempt the answer is for (as reserveJobs counted it),
            the result object (MessagePack bytes, as the worker sent it; '' for a job without
            keep_result, which stores none), handed (-1: a kept
            result is stored for whoever fetches it; n >= 0: polls of the calling master wait
            for this result and get it from the caller, so it is not stored, and n of them are
            known to be counted in the watch key)
  Returns: one integer per job, in order: 1 done; 2 done, and the kept result is the caller's to
           hand over (handed, keep_result); 0 stale (not running, or another attempt): nothing
           changed for that job (its leases, if any, are not released here).
]]
local jobs, inflight, done_prefix, counts, stats = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local watch_prefix = KEYS[10]
local ttl, channel, shard = ARGV[1], ARGV[2], ARGV[3]
local k = {jobs = jobs, ready_prefix = KEYS[6], scheduled = KEYS[7], counts = counts,
           unique = KEYS[8], order = KEYS[9]}
local opts = {now_ms = tonumber(ARGV[4]), channel = channel, shard = shard}
local out, succeeded, running = {}, 0, {}
-- Releases in this step: one Redis holds the constraints' state too.
local cx = KEYS[11] and constraint_context(KEYS[11], KEYS[12], opts.now_ms, true)
local leases = {}
local finished, removed, seen = batched('ZREM'), batched('HDEL'), {}
for a = 6, #ARGV, 4 do
  local field = ARGV[a]
  -- Without its argument: only a kept result stored needs it (pack_loaded_record).
  local record, raw, from, to = load_running(jobs, field, ARGV[a + 1],
                                              load_record_without_argument)
  -- Records are deleted after the loop: a field given twice ends only once.
  if record and not seen[field] then
    seen[field] = true
    finished.add(inflight, field)
    removed.add(record_at(jobs, field))
    local name = record[R_NAME]
    running[name] = (running[name] or 0) + 1
    succeeded = succeeded + 1
    local status = 1
    if record[R_KEEP_RESULT] == 1 then
      local watch = watch_prefix .. field
      local mine = tonumber(ARGV[a + 3])
      if mine >= 0 then
        -- Fetched as it is stored. Polls beyond the caller's that counted themselves (others'
        -- or the caller's whose count it has not seen yet) learn at once that it is gone.
        status = 2
        local polls = tonumber(rcall('GET', watch) or 0)
        if polls > 0 then rcall('DEL', watch) end
        if polls > mine then rcall('SPUBLISH', channel, 'r ' .. shard .. '-' .. field) end
      else
        record[R_STATE] = S_SUCCEEDED
        record[R_RESULT] = ARGV[a + 2]
        rcall('SET', done_prefix .. field, pack_loaded_record(record, raw, from, to), 'EX', ttl)
        if rcall('DEL', watch) == 1 then
          rcall('SPUBLISH', channel, 'r ' .. shard .. '-' .. field)
        end
      end
    end
    if cx and record[R_CONSTRAINTS] then
      leases[#leases + 1] = {shard .. '-' .. field .. ':' .. ARGV[a + 1], record[R_CONSTRAINTS]}
    end
    finish_for_good(k, opts, field, record)
    out[#out + 1] = status
  else
    out[#out + 1] = 0
  end
end
finished.send()
removed.send()
for name, n in pairs(running) do count_add(counts, 'running', name, -n) end
if succeeded > 0 then rcall('HINCRBY', stats, 'succeeded', digits(succeeded)) end
if cx then
  local orders = {}
  free_leases(cx, leases, orders, ARGV[5])
  run_wakes(cx, orders, shard_keys_like(jobs, KEYS[6], KEYS[13], channel), ARGV[5])
end
return out
