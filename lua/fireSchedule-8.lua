#!lua
--[[ fireSchedule: one tick of a schedule, claimed and made in one step. The master computed the
  tick and what follows it from the record it read (src/schedules/runner.cpp); the tick is
  claimed by a compare-and-set on the record's token, version and next tick, so of the masters
  that race for a tick exactly one makes its job, and one made from an older definition is
  refused. The job is stored in this shard, the one the schedule lives in because its template's
  ordering_key or unique_key routes its jobs here (else the shard of its name). A run now
  ('now') makes a job at once without touching the timetable.
  Memory: refused while Redis is over maxmemory, before it writes anything: it stores a job (the
          tick stays due and is claimed once Redis takes writes again, or counted missed).
  KEYS[1] schedules hash of the shard (name -> record, lua/lib/preamble_1_load_schedule.lua)
  KEYS[2] stats hash of the shard (seq, pushed)
  KEYS[3] jobs prefix of the shard (record buckets, see the preamble)
  KEYS[4] names set of the shard
  KEYS[5] ready prefix of the shard (the queue of name N is KEYS[5] .. N)
  KEYS[6] counts hash of the shard
  KEYS[7] unique prefix of the shard (lua/lib/preamble_1_unique_claim.lua)
  KEYS[8] order prefix of the shard (an ordering key's line)
  ARGV[1] the schedule's name
  ARGV[2] the record's token
  ARGV[3] the version the tick was computed from
  ARGV[4] mode: 'tick' (the record's next tick) or 'now' (a run now)
  ARGV[5] tick: the record's next tick as read (ms); now: ignored
  ARGV[6] action (tick): 'run' (make the tick's job) or 'skip' (ticks missed under missed: skip)
  ARGV[7] tick: how many ticks to count as missed
  ARGV[8] tick: the next tick after this one (ms; 0 none: the schedule has ended)
  ARGV[9] tick: 1 when overlap is skip: no job while the previous one has not finished
  ARGV[10] the job's scheduled_at (ms since the epoch)
  ARGV[11] the job's scheduled_at as ISO 8601 with the offset of the schedule's zone
  ARGV[12] now (ms since the epoch): enqueued_at
  ARGV[13] ready stamp (µs since the epoch)
  ARGV[14] events channel: gets announce_ready when the job is ready
  ARGV[15] the shard (its number: the job's id is <shard>-<field>)
  ARGV[16] the job's name
  ARGV[17] its argument (MessagePack bytes)
  ARGV[18] its priority (int32)
  ARGV[19] its max_retry
  ARGV[20] its keep_result (0|1)
  ARGV[21] its timeout (ms)
  ARGV[22] its unique_key ('' none)
  ARGV[23] its unique_until (0 finished | 1 started)
  ARGV[24] its unique_for (ms)
  ARGV[25] its ordering_key ('' none)
  ARGV[26] its constraints: those it matched, a MessagePack array [name1, key1, ...]; '' none
  Returns: {1, id} the job was made (id <shard>-<field>); {2, id} skipped: the previous job (id)
           has not finished (overlap: skip); {3, id} duplicate: a live job (id) holds its
           unique_key's claim (a tick counts it in `duplicates`); {4, ''} no job (ticks skipped
           as missed); {-2, ''} no live
           record of this token ticks here; {-3, ''} the record changed since it was read:
           nothing changed.
]]
local schedules = KEYS[1]
local k = {stats = KEYS[2], jobs = KEYS[3], names = KEYS[4], ready_prefix = KEYS[5],
           counts = KEYS[6], unique = KEYS[7], order = KEYS[8]}
local name, mode, shard = ARGV[1], ARGV[4], ARGV[15]
local record = load_schedule(schedules, name)
if not record or record.status ~= 'active' or record.token ~= tonumber(ARGV[2]) then
  return {-2, ''}
end
if record.version ~= tonumber(ARGV[3]) or
    (mode == 'tick' and record.next ~= tonumber(ARGV[5])) then
  return {-3, ''}
end

local function made_by(outcome, id)
  if mode == 'tick' then
    record.missed = record.missed + tonumber(ARGV[7])
    record.next = tonumber(ARGV[8])
  end
  put_schedule(schedules, name, record)
  return {outcome, id}
end

if mode == 'tick' and ARGV[6] == 'skip' then return made_by(4, '') end
if mode == 'tick' and ARGV[9] == '1' and record.last_job ~= '' then
  local last_shard, last_field = string.match(record.last_job, '^(%d+)-(.+)$')
  local last = last_shard == shard and load_record(k.jobs, last_field)
  if last and (last[R_STATE] == S_QUEUED or last[R_STATE] == S_SCHEDULED or
               last[R_STATE] == S_RUNNING) then
    record.skipped = record.skipped + 1
    return made_by(2, record.last_job)
  end
end

local a = 16
local field, holder = store_job(k,
  {now_ms = tonumber(ARGV[12]), stamp = base62(tonumber(ARGV[13])), channel = ARGV[14],
   shard = shard, traceparent = ''},
  {name = ARGV[a], argument = ARGV[a + 1], priority = tonumber(ARGV[a + 2]),
   max_retry = tonumber(ARGV[a + 3]), keep_result = tonumber(ARGV[a + 4]),
   timeout_ms = tonumber(ARGV[a + 5]), unique_key = ARGV[a + 6],
   unique_until = tonumber(ARGV[a + 7]), unique_for_ms = ARGV[a + 8],
   ordering_key = ARGV[a + 9], ready_at_ms = 0,
   constraints = ARGV[a + 10] ~= '' and cmsgpack.unpack(ARGV[a + 10]) or false,
   schedule = {name, ARGV[11]}})
if not field then
  if mode == 'tick' then record.duplicates = record.duplicates + 1 end
  return made_by(3, shard .. '-' .. holder)
end
record.runs = record.runs + 1
record.last_run = tonumber(ARGV[10])
record.last_job = shard .. '-' .. field
return made_by(1, record.last_job)
