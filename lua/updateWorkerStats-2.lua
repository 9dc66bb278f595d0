#!lua flags=allow-oom
--[[ updateWorkerStats: adds what a master counted of its attempts since its last flush to the
  workers' stats, and sets their health marks, for the workers still registered only. A worker
  removed meanwhile (DELETE, its ttl, by another master) had its stats hash written back for good
  by the master's plain commands, with no registration left to remove it with.
  Memory: runs while Redis is over maxmemory (allow-oom): it changes fields of the stats of
  registered workers only (a handful each), and the health marks tell other masters to hold off.
  A busy mark is also announced on the control channel, "b <id> <until_ms>": the other masters
  hold the endpoint back too (a master that sends it before giving the job back has it heard
  first, on one Redis, as messages go out in order).
  KEYS[1] workers hash (id -> registration JSON)
  KEYS[2] stats prefix: the stats hash of worker W is KEYS[2] .. W
  ARGV[1] control channel (events)
  ARGV[2..] seven per worker: its id; attempts ended, of them succeeded, of them failed ('0' for
          none); last_error, down_until_ms, busy_until_ms ('' leaves each as it is)
  Returns: how many of them were still registered (and updated).
]]
local workers, stats_prefix, channel = KEYS[1], KEYS[2], ARGV[1]
local updated = 0
for a = 2, #ARGV, 7 do
  local id = ARGV[a]
  if rcall('HEXISTS', workers, id) == 1 then
    local stats = stats_prefix .. id
    updated = updated + 1
    if ARGV[a + 1] ~= '0' then rcall('HINCRBY', stats, 'dispatched', ARGV[a + 1]) end
    if ARGV[a + 2] ~= '0' then rcall('HINCRBY', stats, 'succeeded', ARGV[a + 2]) end
    if ARGV[a + 3] ~= '0' then rcall('HINCRBY', stats, 'failed', ARGV[a + 3]) end
    if ARGV[a + 4] ~= '' then rcall('HSET', stats, 'last_error', ARGV[a + 4]) end
    if ARGV[a + 5] ~= '' then rcall('HSET', stats, 'down_until_ms', ARGV[a + 5]) end
    if ARGV[a + 6] ~= '' then
      rcall('HSET', stats, 'busy_until_ms', ARGV[a + 6])
      rcall('SPUBLISH', channel, 'b ' .. id .. ' ' .. ARGV[a + 6])
    end
  end
end
return updated
