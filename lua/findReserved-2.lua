#!lua flags=no-writes
--[[ findReserved: the jobs reservations took, found by their tokens, for a master whose answers
  to those reserveJobs calls (or pushJobs calls that took jobs at once) were lost (a connection
  that broke, a proxy that timed out): without it they would stay running, sent to no worker,
  until the reaper counted their attempt as timed out after their deadline. The master gives
  them back (releaseJob, the attempt not counted). Pages through the inflight zset with ZSCAN,
  so one call stays short however many jobs run; a member there for the whole scan is seen at
  least once (maybe twice: the master keeps one of each). Records are read without their
  argument.
  Memory: reads only (no-writes), so it runs while Redis is over maxmemory.
  KEYS[1] jobs prefix of the shard (record buckets, see the preamble)
  KEYS[2] inflight zset of the shard (field, score = deadline ms)
  ARGV[1] the earliest now (ms since the epoch) of those reservations: their jobs' deadlines
          are not before it
  ARGV[2] ZSCAN cursor: '0' for the first page, then the one the last page answered
  ARGV[3] members to look at in this page (ZSCAN's COUNT)
  ARGV[4..] one per reservation: the token it was given (reserveJobs' ARGV[8], pushJobs'
            ARGV[9])
  Returns: {cursor, field1, record1, field2, record2, ...}: the cursor of the next page ('0'
           when the scan is done), then the running jobs of this page that carry one of the
           tokens, their records (MessagePack) as stored.
]]
local jobs, inflight = KEYS[1], KEYS[2]
local from = tonumber(ARGV[1])
local wanted = {}
for i = 4, #ARGV do wanted[ARGV[i]] = true end
local page = rcall('ZSCAN', inflight, ARGV[2], 'COUNT', ARGV[3])
local out = {page[1]}
local members = page[2]
for i = 1, #members, 2 do
  if tonumber(members[i + 1]) >= from then
    local field = members[i]
    local record, raw = load_record_without_argument(jobs, field)
    if record and record[R_STATE] == S_RUNNING and wanted[record[R_TAKEN_BY]] then
      out[#out + 1] = field
      out[#out + 1] = raw or rcall('HGET', record_at(jobs, field))  -- loaded whole: no raw
    end
  end
end
return out
