--[[ pushJobs: stores a batch of new jobs in one shard and makes them ready, all or nothing.
  Invariant: every ready job has a record in state queued whose R_READY_MEMBER is its member in
  the ready queue of its name. Members are readyStamp(9) .. field(9): among equal priorities
  (the score) the job that became ready first sorts first; ties on the stamp fall back to the
  field, i.e. push order within the shard.
  KEYS[1] stats hash of the shard (seq, pushed, ...)
  KEYS[2] jobs hash of the shard (field -> record)
  KEYS[3] names set of the shard (job names seen)
  KEYS[4] ready-queue prefix: the ready zset of name N is KEYS[4] .. N (keys.cpp builds it so)
  ARGV[1] now (ms since the epoch): enqueued_at
  ARGV[2] ready stamp (µs since the epoch, non-decreasing per master)
  ARGV[3] events channel: gets announce_ready once per distinct name of the batch, with the
          batch's best job of that name
  ARGV[4] traceparent (W3C, validated by the master) kept in every job's R_TRACEPARENT; '' for
          none
  ARGV[5] the shard (its number, for the announcements)
  ARGV[6..] six per job: name, argument (MessagePack bytes), priority (int32), max_retry,
            keep_result (0|1), timeout (ms)
  Returns: the new jobs' fields (array of 9-character strings), in the order given.
]]
local stats, jobs, names, ready_prefix = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now = tonumber(ARGV[1])
local stamp = base62(tonumber(ARGV[2]), 9)
local channel = ARGV[3]
local traceparent = ARGV[4]
local shard = ARGV[5]
local first_job, per_job = 6, 6
local count = (#ARGV - first_job + 1) / per_job

local last = rcall('HINCRBY', stats, 'seq', count)
local fields = {}
local names_in_batch, best = {}, {}
for i = 0, count - 1 do
  local a = first_job + i * per_job
  local name, priority = ARGV[a], tonumber(ARGV[a + 2])
  local field = base62(last - count + 1 + i, 9)
  local member = stamp .. field
  save_record(jobs, field, {name, ARGV[a + 1], priority, tonumber(ARGV[a + 3]),
    tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5]), S_QUEUED, 0, now, member, '', traceparent, ''})
  rcall('ZADD', ready_prefix .. name, priority, member)
  rcall('SADD', names, name)
  fields[i + 1] = field
  -- Within a batch members grow with the field, so the first job of the smallest priority is
  -- the name's best.
  local b = best[name]
  if not b then
    best[name] = {priority, member}
    names_in_batch[#names_in_batch + 1] = name
  elseif priority < b[1] then
    best[name] = {priority, member}
  end
end
rcall('HINCRBY', stats, 'pushed', count)
for _, name in ipairs(names_in_batch) do
  announce_ready(channel, shard, name, best[name][1], best[name][2])
end
return fields
