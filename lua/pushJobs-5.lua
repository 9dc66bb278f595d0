--[[ pushJobs: stores a batch of new jobs in one shard and makes them ready, all or nothing.
  Invariant: every ready job has a record in state queued and exactly one member,
  R_READY_STAMP .. field, in the ready list of its name and priority
  (lua/lib/preamble_1_ready_list.lua). Within a batch the jobs join their lists in push
  order.
  KEYS[1] stats hash of the shard (seq, pushed, ...)
  KEYS[2] jobs prefix of the shard (record buckets, see the preamble)
  KEYS[3] names set of the shard (job names seen)
  KEYS[4] ready prefix of the shard: the queue of name N is KEYS[4] .. N (keys.cpp builds it so)
  KEYS[5] counts hash of the shard (ready:<name> += jobs pushed)
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
local stats, jobs, names, ready_prefix, counts = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local now = tonumber(ARGV[1])
local stamp = base62(tonumber(ARGV[2]), 9)
local channel = ARGV[3]
local traceparent = ARGV[4]
local shard = ARGV[5]
local first_job, per_job = 6, 6
local count = (#ARGV - first_job + 1) / per_job

local last = rcall('HINCRBY', stats, 'seq', count)
local fields = {}
-- Per name: {best priority, its first member, per priority the members in push order}.
local by_name, names_in_batch = {}, {}
local records = batched('HSET')
for i = 0, count - 1 do
  local a = first_job + i * per_job
  local name, priority = ARGV[a], tonumber(ARGV[a + 2])
  local field = base62(last - count + 1 + i, 9)
  local bucket, slot = record_at(jobs, field)
  records.add(bucket, slot, cmsgpack.pack({name, ARGV[a + 1], priority, tonumber(ARGV[a + 3]),
    tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5]), S_QUEUED, 0, now, stamp, '', traceparent, ''}))
  fields[i + 1] = field
  local member = stamp .. field
  local n = by_name[name]
  if not n then
    n = {priority, member, {}}
    by_name[name] = n
    names_in_batch[#names_in_batch + 1] = name
  elseif priority < n[1] then
    n[1], n[2] = priority, member
  end
  local list = n[3][priority]
  if list then list[#list + 1] = member else n[3][priority] = {member} end
end
records.send()
for _, name in ipairs(names_in_batch) do
  local n, queue, jobs_of_name = by_name[name], ready_prefix .. name, 0
  for priority, members in pairs(n[3]) do
    make_ready(queue, priority, members)
    jobs_of_name = jobs_of_name + #members
  end
  rcall('SADD', names, name)
  count_add(counts, 'ready', name, jobs_of_name)
end
rcall('HINCRBY', stats, 'pushed', count)
for _, name in ipairs(names_in_batch) do
  announce_ready(channel, shard, name, by_name[name][1], by_name[name][2])
end
return fields
