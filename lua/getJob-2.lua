#!lua flags=no-writes
--[[ getJob: reads a job's record wherever it is: live (queued, scheduled, running, dead) in
  its bucket, or finished with a kept result in its done key. Changes nothing.
  Memory: reads only (no-writes), so it runs while Redis is over maxmemory.
  KEYS[1] jobs prefix of the job's shard (record buckets, see the preamble)
  KEYS[2] done key of the job (finished record with its result, expires after result_ttl)
  ARGV[1] the job's field
  Returns: the record (MessagePack array, see preamble) or nil when there is none.
]]
local raw = rcall('HGET', record_at(KEYS[1], ARGV[1]))
if raw then return raw end
return rcall('GET', KEYS[2])
