#!lua flags=allow-oom
--[[ removeSchedule: ends the record of one token of a schedule in this shard, leaving a
  tombstone of the token (a later 'new' saveSchedule of it or an older one is refused): 'remove'
  deletes the schedule's live record (a DELETE, or the old shard's record once a move arrived);
  'fence' makes sure a token whose claim is being taken over never gets a record here (its
  writer may still be on its way).
  Memory: runs while Redis is over maxmemory (allow-oom): it ends a schedule; a tombstone is a
          few bytes.
  KEYS[1] schedules hash of the shard (name -> record, lua/lib/preamble_1_load_schedule.lua)
  ARGV[1] the name
  ARGV[2] the token
  ARGV[3] mode: 'remove' or 'fence'
  ARGV[4] events channel: gets "t <shard> <name>" when a live record ends
  ARGV[5] the shard (its number, for the announcement)
  Returns: remove: 1 removed, -2 no live record of this token here (nothing changed); fence: 1
           a live record of this token is here (nothing changed), 0 fenced.
]]
local schedules = KEYS[1]
local name, token, mode = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local record = load_schedule(schedules, name)
local live = record and record.status ~= 'gone'
if live and record.token == token then
  if mode == 'fence' then return 1 end
  put_schedule(schedules, name, {status = 'gone', token = token}, ARGV[4], ARGV[5])
  return 1
end
if mode == 'remove' then return -2 end
-- Fenced when a record of this token or a newer one is here (saveSchedule refuses it), or a
-- live record of an older token is (it refuses that too): only an older tombstone or none is
-- replaced.
if not record or (not live and record.token < token) then
  put_schedule(schedules, name, {status = 'gone', token = token})
end
return 0
