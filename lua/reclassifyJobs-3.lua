#!lua
--[[ reclassifyJobs: gives jobs that have not started the constraints they match now, after a
  constraint was created or its match or key changed (the master matched them in C++ against the
  new definitions). Each job changes only if its record is still exactly the one the master read
  (compare and set), so a job that moved on meanwhile keeps what it has. A job held back by a
  constraint leaves its pair's held zset in this shard (lua/lib/preamble_2_unhold_here.lua) for
  the front of its ready list, to be admitted again under its new constraints; a job ready,
  scheduled or waiting for its ordering key only gets the new list.
  Memory: refused while Redis is over maxmemory, before it writes anything: a job's record grows
          with the constraints it matches.
  KEYS[1] jobs prefix of the shard (record buckets, see the preamble)
  KEYS[2] ready prefix of the shard (the queue of name N = KEYS[2] .. N)
  KEYS[3] held prefix of the shard (lua/lib/preamble_1_holds_of.lua)
  ARGV[1] events channel (announce_ready for a job that left a held zset)
  ARGV[2] the shard (its number, for the announcements)
  ARGV[3..] three per job: field, its record as read (MessagePack bytes), its new constraints
            (a MessagePack array [name1, key1, ...]; '' for none)
  Returns: the number of jobs changed.
]]
local jobs, ready_prefix = KEYS[1], KEYS[2]
local channel, shard = ARGV[1], ARGV[2]
local h = holds_of(KEYS[3])
local changed = 0
for a = 3, #ARGV, 3 do
  local field = ARGV[a]
  local bucket, slot = record_at(jobs, field)
  if rcall('HGET', bucket, slot) == ARGV[a + 1] then
    local record = load_record(jobs, field)
    if record[R_STATE] == S_QUEUED or record[R_STATE] == S_SCHEDULED then
      local was_held = record[R_BLOCKED_BY] ~= '' and record[R_BLOCKED_BY] ~= 'ordering_key'
      if was_held then unhold_here(h, record, field) end
      record[R_CONSTRAINTS] = ARGV[a + 2] ~= '' and cmsgpack.unpack(ARGV[a + 2]) or false
      if was_held then
        record[R_BLOCKED_BY] = ''
        local member = record[R_READY_STAMP] .. field
        make_ready(ready_prefix .. record[R_NAME], record[R_PRIORITY], {member}, true)
        announce_ready(channel, shard, record[R_NAME], record[R_PRIORITY], member)
      end
      save_record(jobs, field, record)
      changed = changed + 1
    end
  end
end
return changed
