#!lua flags=no-writes
--[[ listDead: the dead jobs of one shard, newest first, optionally of one name. Changes nothing.
  Reads the dead zset in chunks from the newest, skipping other names, and stops after scanning
  10000 members: a name with few dead jobs among many of other names may show fewer than `limit`.
  Memory: reads only (no-writes), so it runs while Redis is over maxmemory.
  KEYS[1] dead zset of the shard (field, score = failure ms)
  KEYS[2] jobs prefix of the shard (record buckets, see the preamble)
  ARGV[1] the name, "" for any
  ARGV[2] limit: the most jobs to return
  Returns: {field1, failed_at_ms1, record1, field2, ...}: records as stored (MessagePack),
           the failure object in R_RESULT.
]]
local dead, jobs = KEYS[1], KEYS[2]
local name, limit = ARGV[1], tonumber(ARGV[2])
local max_scanned, chunk = 10000, 100
local out, found, scanned = {}, 0, 0
while found < limit and scanned < max_scanned do
  local batch = rcall('ZREVRANGE', dead, scanned, scanned + chunk - 1, 'WITHSCORES')
  if #batch == 0 then break end
  for i = 1, #batch, 2 do
    local raw = rcall('HGET', record_at(jobs, batch[i]))
    if raw and (name == '' or cmsgpack.unpack(raw)[R_NAME] == name) then
      out[#out + 1] = batch[i]
      out[#out + 1] = tonumber(batch[i + 1])
      out[#out + 1] = raw
      found = found + 1
      if found == limit then break end
    end
  end
  scanned = scanned + #batch / 2
end
return out
