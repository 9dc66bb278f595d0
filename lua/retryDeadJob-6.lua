#!lua flags=allow-oom
--[[ retryDeadJob: an operator gives a dead job another life: ready again at once with its
  attempts reset, as if pushed now (at the back of its ready list, stamped now), keeping its id.
  A result kept for the pusher (the failure) is withdrawn, since the job is no longer finished.
  A job of an ordering key joins the back of its key's line: ready when the line was empty, else
  waiting (queued, R_BLOCKED_BY) behind the others. Its unique claim is not taken again.
  Memory: runs while Redis is over maxmemory (allow-oom): the job moves from the dead set to its
          ready list and its kept failure is dropped.
  KEYS[1] jobs prefix of the job's shard (record buckets, see the preamble)
  KEYS[2] dead zset of the shard
  KEYS[3] ready prefix of the shard (the queue of name N = KEYS[3] .. N)
  KEYS[4] counts hash of the shard (dead:<name> -= 1, ready:<name> += 1)
  KEYS[5] done key of the job
  KEYS[6] order prefix of the shard (the line of ordering key K = KEYS[6] .. K)
  ARGV[1] the job's field
  ARGV[2] ready stamp (µs since the epoch, as pushJobs takes it)
  ARGV[3] events channel: gets announce_ready
  ARGV[4] the shard (its number, for the announcement)
  Returns: 1 ready again; -1 no dead job with that field: nothing changed.
]]
local jobs, dead, ready_prefix, counts, done = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local field = ARGV[1]
local record = load_record(jobs, field)
if not record or record[R_STATE] ~= S_DEAD then return -1 end
local name = record[R_NAME]
record[R_STATE] = S_QUEUED
record[R_ATTEMPTS] = 0
record[R_RESULT] = ''
record[R_READY_STAMP] = base62(tonumber(ARGV[2]))
record[R_READY_AT_MS] = 0
local waits = record[R_ORDERING_KEY] ~= '' and
  rcall('RPUSH', KEYS[6] .. record[R_ORDERING_KEY], field) > 1
record[R_BLOCKED_BY] = waits and 'ordering_key' or ''
save_record(jobs, field, record)
rcall('ZREM', dead, field)
count_add(counts, 'dead', name, -1)
count_add(counts, 'ready', name, 1)
rcall('DEL', done)
if not waits then
  local member = record[R_READY_STAMP] .. field
  make_ready(ready_prefix .. name, record[R_PRIORITY], {member})
  announce_ready(ARGV[3], ARGV[4], name, record[R_PRIORITY], member)
end
return 1
