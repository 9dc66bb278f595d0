#!lua flags=allow-oom
--[[ removeSchedule: ends the record of one token of a schedule in this shard, leaving a
  tombstone of the token (a later 'new' saveSchedule of it or an older one is refused): 'remove'
  deletes the schedule's live record (a DELETE, or the old shard's record once a move arrived);
  'fence' makes sure a token whose claim is being taken over never gets a record here (its
  writer may still be on its way). A tombstone is kept for KEEP_MS (a day): the writers it
  refuses were on their way when it was written, each a single script call its master sends
  within its command timeout (seconds) of reading the claim, and the day leaves room for clocks
  that differ between masters. Each tombstone written sweeps up to SWEEP tombstones of the shard
  older than that (the tombstones zset says which and when), so the schedules hash does not grow
  by one field per name ever deleted; a name whose tombstone was replaced by a live record (a
  schedule created again under it) only leaves the zset.
  Memory: runs while Redis is over maxmemory (allow-oom): it ends a schedule; a tombstone is a
          few bytes, and the sweep frees more than it takes.
  KEYS[1] schedules hash of the shard (name -> record, lua/lib/preamble_1_load_schedule.lua)
  KEYS[2] tombstones zset of the shard: name -> when its tombstone was last written (ms)
  ARGV[1] the name
  ARGV[2] the token
  ARGV[3] mode: 'remove' or 'fence'
  ARGV[4] events channel: gets "t <shard> <name>" when a live record ends
  ARGV[5] the shard (its number, for the announcement)
  ARGV[6] now (ms since the epoch): when the tombstone is written, and what is old enough to sweep
  Returns: remove: 1 removed, -2 no live record of this token here (nothing changed); fence: 1
           a live record of this token is here (nothing changed), 0 fenced.
]]
local KEEP_MS, SWEEP = 86400000, 10
local schedules, tombstones = KEYS[1], KEYS[2]
local name, token, mode = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local now = tonumber(ARGV[6])

local function bury(channel, shard)
  put_schedule(schedules, name, {status = 'gone', token = token}, channel, shard)
  rcall('ZADD', tombstones, now, name)
  for _, old in ipairs(rcall('ZRANGEBYSCORE', tombstones, '-inf', now - KEEP_MS, 'LIMIT', '0',
                             SWEEP)) do
    local record = load_schedule(schedules, old)
    if record and record.status == 'gone' then rcall('HDEL', schedules, old) end
    rcall('ZREM', tombstones, old)
  end
end

local record = load_schedule(schedules, name)
local live = record and record.status ~= 'gone'
if live and record.token == token then
  if mode == 'fence' then return 1 end
  bury(ARGV[4], ARGV[5])
  return 1
end
if mode == 'remove' then return -2 end
-- Fenced when a record of this token or a newer one is here (saveSchedule refuses it), or a
-- live record of an older token is (it refuses that too): only an older tombstone or none is
-- replaced.
if not record or (not live and record.token < token) then bury() end
return 0
