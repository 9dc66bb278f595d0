#!lua flags=no-writes
--[[ findReserved: the jobs a reservation took, found by its token, for a master whose answer to
  that reserveJobs call was lost (a connection that broke, a proxy that timed out): without it
  they would stay running, sent to no worker, until the reaper counted their attempt as timed
  out after their deadline. The master gives them back (releaseJob, the attempt not counted).
  Pages through the inflight zset with ZSCAN, so one call stays short however many jobs run;
  a member there for the whole scan is seen at least once.
  Memory: reads only (no-writes), so it runs while Redis is over maxmemory.
  KEYS[1] jobs prefix of the shard (record buckets, see the preamble)
  KEYS[2] inflight zset of the shard (field, score = deadline ms)
  ARGV[1] the token the reservation was given (its ARGV[8])
  ARGV[2] the reservation's now (ms since the epoch): its jobs' deadlines are not before it
  ARGV[3] ZSCAN cursor: '0' for the first page, then the one the last page answered
  ARGV[4] members to look at in this page (ZSCAN's COUNT)
  Returns: {cursor, field1, record1, field2, record2, ...}: the cursor of the next page ('0'
           when the scan is done), then the running jobs of this page that carry the token,
           their records (MessagePack) as stored.
]]
local jobs, inflight, token = KEYS[1], KEYS[2], ARGV[1]
local from = tonumber(ARGV[2])
local page = rcall('ZSCAN', inflight, ARGV[3], 'COUNT', ARGV[4])
local out = {page[1]}
local members = page[2]
for i = 1, #members, 2 do
  if tonumber(members[i + 1]) >= from then
    local field = members[i]
    local raw = rcall('HGET', record_at(jobs, field))
    local record = raw and cmsgpack.unpack(raw)
    if record and record[R_STATE] == S_RUNNING and record[R_TAKEN_BY] == token then
      out[#out + 1] = field
      out[#out + 1] = raw
    end
  end
end
return out
