-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- Running jobs' deadlines for a shard's inflight zset, gathered into one ZADD (batched):
--   local deadlines = inflight_deadlines(inflight); deadlines.add(deadline, field); ...
--   deadlines.send()
-- The zset also keeps one member that is not a job, INFLIGHT_KEEPER, at +inf, where no reaping
-- reaches it, and which no job's field can equal. A member over zset-max-listpack-value bytes
-- (64 by default) makes Redis store the zset as a skiplist from the ZADD that creates it, and it
-- stays one: the key never empties. As a listpack (up to 128 members by default, the usual
-- number running) every ZADD walked the list, parsing each member's score, and every ZREM
-- compared each member: reserveJobs spent 28 µs per call of about 40 jobs in its ZADD, against 6
-- as a skiplist (docs/BENCHMARKS.md, row b). The keeper goes into each ZADD, where it costs one
-- lookup, so a zset made before it existed, or deleted since, becomes a skiplist on its next add.
local INFLIGHT_KEEPER =
    '(not a job) keeps this zset a skiplist, which is cheaper to add jobs to and remove them from'
local function inflight_deadlines(inflight)
  local zadd, kept = batched('ZADD'), false
  local function add(deadline, field)
    if not kept then
      zadd.add(inflight, '+inf', INFLIGHT_KEEPER)
      kept = true
    end
    zadd.add(inflight, deadline, field)
  end
  local function send()
    zadd.send()
    kept = false
  end
  return {add = add, send = send}
end
