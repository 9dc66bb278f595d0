#!lua flags=allow-oom
--[[ readHeads: the heads of several queues of one shard, each as reserveJobs with max 0 answers
  it (lua/lib/preamble_3_queue_head.lua: the members of cancelled jobs met at a head are dropped
  on the way). The scheduler reads the heads it does not know this way, one call per shard for
  all the names an endpoint serves: one reserveJobs per queue cost a call per name and shard,
  16 per name, every second for an endpoint serving many names. Most of those queues are empty
  (they have no key): one EXISTS answers CHUNK names at once, and only a chunk with a queue in it
  is read name by name, and only the heads found are answered. With 300 names, none of them
  with a job, a call cost Redis 186 µs name by name with an answer per name, 91 µs by chunks,
  and 51 µs answering only what it found (bench harness, docs/BENCHMARKS.md).
  Memory: runs while Redis is over maxmemory (allow-oom): it only drops members of cancelled
          jobs.
  KEYS[1] jobs prefix of the shard (record buckets, see the preamble)
  KEYS[2] ready prefix of the shard: the queue of name N is KEYS[2] .. N (keys.cpp builds it so)
  ARGV[1..] one per name: the names whose queues are read
  Returns: {position1, member1, priority1, position2, ...}: for each name whose queue holds a
           job, in the order given, its 0-based position among the names and its queue's head;
           nothing for the names whose queues are empty
]]
local CHUNK = 32
local jobs, ready_prefix = KEYS[1], KEYS[2]
local queues, out = {}, {}
for i = 1, #ARGV do queues[i] = ready_prefix .. ARGV[i] end
for first = 1, #queues, CHUNK do
  local last = math.min(first + CHUNK - 1, #queues)
  if rcall('EXISTS', unpack(queues, first, last)) > 0 then
    for i = first, last do
      local member, priority = queue_head(jobs, queues[i])
      if member ~= '' then
        out[#out + 1] = i - 1
        out[#out + 1] = member
        out[#out + 1] = priority
      end
    end
  end
end
return out
