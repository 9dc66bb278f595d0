--[[ queueStats: one name's numbers in one shard, for the queues API and metrics. Changes nothing.
  The oldest ready job is not simply the head of the queue (that is the best priority): it is
  the smallest ready stamp among the fronts of the priorities' lists. The walk stops after 100
  distinct priorities; beyond that the stamp returned may be newer than the oldest one, i.e. the
  lag derived from it is a lower bound. A cancelled job's member left at a front counts too.
  KEYS[1] the queue of the name (lua/lib/preamble_1_ready_list.lua)
  KEYS[2] counts hash of the shard
  ARGV[1] the name
  Returns: {ready, scheduled, running, dead, oldest_stamp_us}: oldest_stamp_us is the ready stamp
           (µs since the epoch) of the job ready the longest, -1 when none is ready.
]]
local queue, counts, name = KEYS[1], KEYS[2], ARGV[1]
local max_priorities = 100
local n = rcall('HMGET', counts, 'ready:' .. name, 'scheduled:' .. name, 'running:' .. name,
                'dead:' .. name)

local oldest = -1
for _, priority in ipairs(rcall('ZRANGE', queue, 0, max_priorities - 1)) do
  local front = rcall('LINDEX', ready_list(queue, priority), 0)
  if front then
    local stamp = base62_decode(string.sub(front, 1, 9))
    if oldest < 0 or stamp < oldest then oldest = stamp end
  end
end
return {tonumber(n[1]) or 0, tonumber(n[2]) or 0, tonumber(n[3]) or 0, tonumber(n[4]) or 0,
        oldest}
