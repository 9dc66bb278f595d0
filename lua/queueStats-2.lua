--[[ queueStats: one name's numbers in one shard, for the queues API and metrics. Changes nothing.
  The oldest ready job is not simply the head of the queue (that is the best priority): it is
  the smallest ready stamp among the heads of each distinct priority, since within a priority
  members sort by stamp. The walk stops after 100 distinct priorities; beyond that the stamp
  returned may be newer than the oldest one, i.e. the lag derived from it is a lower bound.
  KEYS[1] ready zset of the name
  KEYS[2] counts hash of the shard
  ARGV[1] the name
  Returns: {ready, scheduled, running, dead, oldest_stamp_us}: oldest_stamp_us is the ready stamp
           (µs since the epoch) of the job ready the longest, -1 when none is ready.
]]
local ready, counts, name = KEYS[1], KEYS[2], ARGV[1]
local max_priorities = 100
local n = rcall('HMGET', counts, 'scheduled:' .. name, 'running:' .. name, 'dead:' .. name)

local oldest = -1
local head = rcall('ZRANGE', ready, 0, 0, 'WITHSCORES')
for _ = 1, max_priorities do
  if #head == 0 then break end
  local stamp = base62_decode(string.sub(head[1], 1, 9))
  if oldest < 0 or stamp < oldest then oldest = stamp end
  head = rcall('ZRANGEBYSCORE', ready, '(' .. head[2], '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
end
return {rcall('ZCARD', ready), tonumber(n[1]) or 0, tonumber(n[2]) or 0, tonumber(n[3]) or 0,
        oldest}
