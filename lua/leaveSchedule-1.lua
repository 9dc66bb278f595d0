#!lua
--[[ leaveSchedule: the first step of moving a schedule to another shard (a change of its job
  template's ordering_key or unique_key, whose jobs must be made in that key's shard): its
  record here stops ticking and keeps where it goes and as what (`to`), so that any master can
  finish the move (src/schedules/schedule_store.cpp, finish_move) if the one that began it dies.
  A compare-and-set on the token, version and next tick read, like saveSchedule's update, and on
  the runs read: what the record counted goes there with it, and a run now since the read
  (which moves neither the version nor the next tick) would be lost from its counts. From here
  until the record arrives there, no record of the schedule ticks: never two.
  Memory: refused while Redis is over maxmemory, before it writes anything: the record grows by
          a definition.
  KEYS[1] schedules hash of the shard (name -> record, lua/lib/preamble_1_load_schedule.lua)
  ARGV[1] the name
  ARGV[2] the record's token
  ARGV[3] the version the change was made from
  ARGV[4] to: the shard it moves to
  ARGV[5] to: the claim's token of the record it becomes there (newer than ARGV[2])
  ARGV[6] to: its definition (api::encode_schedule)
  ARGV[7] to: its anchor (ms)
  ARGV[8] to: its next tick (ms; 0 none)
  ARGV[9] settle at (ms since the epoch): when any master finishes the move
  ARGV[10] events channel: gets "t <shard> <name>"
  ARGV[11] the shard (its number, for the announcement)
  ARGV[12] the next tick as read (ms; 0 none) when the change was made: a tick made since then
           refuses it (the next tick carried there would make that tick again)
  ARGV[13] the runs as read when the change was made: a run now since then refuses it
  Returns: {1, version} leaving, version the record's new one; {-2, 0} no live record of this
           token; {-3, version} it changed since it was read (another version, next tick or
           count of runs, or leaving).
]]
local schedules = KEYS[1]
local name, token = ARGV[1], tonumber(ARGV[2])
local record = load_schedule(schedules, name)
if not record or record.status == 'gone' or record.token ~= token then return {-2, 0} end
if record.status ~= 'active' or record.version ~= tonumber(ARGV[3]) or
    record.next ~= tonumber(ARGV[12]) or record.runs ~= tonumber(ARGV[13]) then
  return {-3, record.version}
end
record.status = 'leaving'
record.version = record.version + 1
record.to = {shard = tonumber(ARGV[4]), token = tonumber(ARGV[5]), def = ARGV[6],
             anchor = tonumber(ARGV[7]), next = tonumber(ARGV[8])}
record.next = tonumber(ARGV[9])
put_schedule(schedules, name, record, ARGV[10], ARGV[11])
return {1, record.version}
