#!lua flags=allow-oom
--[[ releaseSlots: a master gives back worker slots it held (its dispatches finished). Never goes
  below 0: a master whose holding was dropped as lapsed (acquireSlots) may release slots that
  are no longer counted.
  Memory: runs while Redis is over maxmemory (allow-oom): it lowers or deletes a counter.
  KEYS[1] slots hash of the worker (master id -> slots held)
  ARGV[1] the master's id
  ARGV[2] how many slots to give back
  Returns: the slots the master still holds.
]]
local slots, me = KEYS[1], ARGV[1]
local held = (tonumber(rcall('HGET', slots, me)) or 0) - tonumber(ARGV[2])
if held <= 0 then
  rcall('HDEL', slots, me)
  return 0
end
rcall('HSET', slots, me, held)
return held
