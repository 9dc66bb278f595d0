#!lua flags=no-writes
--[[ queueStats: one name's numbers in one shard, for the queues API and metrics. Changes nothing.
  The oldest ready job is not simply the head of the queue (that is the best priority): it is
  the smallest ready stamp among the first live members of the priorities' lists. A cancelled
  job's member left in a list is skipped (its record is gone, or no longer queued with that
  stamp). The walk stops after 100 distinct priorities, and looks at most 16 members into each
  list; beyond either the stamp returned may be newer than the oldest one, i.e. the lag derived
  from it is a lower bound. Nothing ready (the ready count is 0): no stamp at all.
  Memory: reads only (no-writes), so it runs while Redis is over maxmemory.
  KEYS[1] the queue of the name (lua/lib/preamble_1_ready_list.lua)
  KEYS[2] counts hash of the shard
  KEYS[3] jobs prefix of the shard (record buckets, see the preamble)
  ARGV[1] the name
  Returns: {ready, scheduled, running, dead, oldest_stamp_us}: oldest_stamp_us is the ready stamp
           (µs since the epoch) of the job ready the longest, -1 when none is ready.
]]
local queue, counts, jobs, name = KEYS[1], KEYS[2], KEYS[3], ARGV[1]
local max_priorities, max_peek = 100, 16
local n = rcall('HMGET', counts, 'ready:' .. name, 'scheduled:' .. name, 'running:' .. name,
                'dead:' .. name)
local ready = tonumber(n[1]) or 0

-- Whether a member's job is queued with the member's stamp (not a cancelled job's leftover).
local function live(member)
  local record = load_record(jobs, string.sub(member, 10))
  return record and record[R_STATE] == S_QUEUED and record[R_READY_STAMP] == string.sub(member, 1, 9)
end

local oldest = -1
if ready > 0 then
  for _, priority in ipairs(rcall('ZRANGE', queue, '0', digits(max_priorities - 1))) do
    for _, member in ipairs(rcall('LRANGE', ready_list(queue, priority), '0', digits(max_peek - 1))) do
      if live(member) then
        local stamp = base62_decode(string.sub(member, 1, 9))
        if oldest < 0 or stamp < oldest then oldest = stamp end
        break
      end
    end
  end
end
return {ready, tonumber(n[2]) or 0, tonumber(n[3]) or 0, tonumber(n[4]) or 0, oldest}
