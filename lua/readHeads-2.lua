#!lua flags=allow-oom
--[[ readHeads: the heads of several queues of one shard, each as reserveJobs with max 0 answers
  it (lua/lib/preamble_3_queue_head.lua: the members of cancelled jobs met at a head are dropped
  on the way). The scheduler reads the heads it does not know this way, one call per shard for
  all the names an endpoint serves: one reserveJobs per queue cost a call per name and shard,
  16 per name, every second for an endpoint serving many names.
  Memory: runs while Redis is over maxmemory (allow-oom): it only drops members of cancelled
          jobs.
  KEYS[1] jobs prefix of the shard (record buckets, see the preamble)
  KEYS[2] ready prefix of the shard: the queue of name N is KEYS[2] .. N (keys.cpp builds it so)
  ARGV[1..] one per name: the names whose queues are read
  Returns: {member1, priority1, member2, priority2, ...}: for each name in the order given, its
           queue's head ('' and '' when it is empty)
]]
local jobs, ready_prefix = KEYS[1], KEYS[2]
local out = {}
for i = 1, #ARGV do
  out[2 * i - 1], out[2 * i] = queue_head(jobs, ready_prefix .. ARGV[i])
end
return out
