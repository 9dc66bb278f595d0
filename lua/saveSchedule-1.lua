#!lua
--[[ saveSchedule: writes the record of a schedule in the shard it lives in: a schedule that
  arrives here ('new': just created, or moved from another shard, keeping what it counted
  there), or a change of its definition in place ('update', a compare-and-set on the token,
  version and next tick read, so two racing changes cannot lose one another, a tick computed
  from the old definition is refused afterwards, and a tick made since the change was read is
  not brought back by writing the next tick read). Tokens of one name only grow: a 'new' write
  whose token is not newer than the record or tombstone here is refused, so a writer that was
  overtaken (its claim taken over and fenced, or the schedule deleted since) can never bring a
  second live record back.
  Memory: refused while Redis is over maxmemory, before it writes anything: it stores a
          definition.
  KEYS[1] schedules hash of the shard (name -> record, lua/lib/preamble_1_load_schedule.lua)
  ARGV[1] the name
  ARGV[2] mode: 'new' or 'update'
  ARGV[3] token: new: the claim's token for this record; update: the record's token
  ARGV[4] update: the version the change was made from (new: ignored)
  ARGV[5] the definition (api::encode_schedule)
  ARGV[6] anchor (ms since the epoch)
  ARGV[7] next tick (ms since the epoch; 0 none)
  ARGV[8] carried, new: what it counted where it comes from, a MessagePack map {last_run, last_job, runs,
          skipped, missed, duplicates}; '' for a new schedule (update: ignored)
  ARGV[9] events channel: gets "t <shard> <name>"
  ARGV[10] the shard (its number, for the announcement)
  ARGV[11] update: the next tick as read (ms; 0 none) when the change was made; fireSchedule
           moves it on without a new version (new: ignored)
  Returns: {1, version} saved, version the record's new one; {0, version} new: this token's
           record is here already (nothing changed); {-1, 0} new: a live record of an older
           token holds the name here; {-2, 0} update: no live record of this token; {-3,
           version} update: it changed since it was read (another version or next tick, or it is
           leaving);
           {-4, 0} new: the token was overtaken: nothing changed.
]]
local schedules = KEYS[1]
local name, mode, token = ARGV[1], ARGV[2], tonumber(ARGV[3])
local record = load_schedule(schedules, name)
if mode == 'update' then
  if not record or record.status == 'gone' or record.token ~= token then return {-2, 0} end
  if record.status ~= 'active' or record.version ~= tonumber(ARGV[4]) or
      record.next ~= tonumber(ARGV[11]) then
    return {-3, record.version}
  end
  record.version = record.version + 1
else
  if record and record.token == token and record.status ~= 'gone' then
    return {0, record.version}
  end
  if record and record.token >= token then return {-4, 0} end
  if record and record.status ~= 'gone' then return {-1, 0} end
  local carried = ARGV[8] ~= '' and cmsgpack.unpack(ARGV[8]) or {}
  record = {status = 'active', token = token, version = 1, last_run = carried.last_run or 0,
            last_job = carried.last_job or '', runs = carried.runs or 0,
            skipped = carried.skipped or 0, missed = carried.missed or 0,
            duplicates = carried.duplicates or 0}
end
record.def, record.anchor, record.next = ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7])
put_schedule(schedules, name, record, ARGV[9], ARGV[10])
return {1, record.version}
