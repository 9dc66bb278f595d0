#!lua flags=allow-oom
--[[ admitJobs: decides, for the candidates one reservation took in a shard (reserveJobs), whether
  every constraint each matched lets it start now, and if so takes them all at once: a lease per
  pair (constraint, key) until the attempt's deadline (a lease that outlives a dead master stops
  counting by itself: running = ZCOUNT now +inf) and, for a rate, one step of the pair's GCRA
  theoretical arrival time (tat). All of a job's constraints or none, in this one step, under
  {c} alone: exact across masters (lua/lib/preamble_4_admit_job.lua says how). On one Redis
  reserveJobs admits in its own step and this script is not called.
  Memory: runs while Redis is over maxmemory (allow-oom): a lease per admitted job, the refusals'
          entries; dispatching the jobs already stored is how memory comes back.
  KEYS[1] constraint defs: the definitions hash (name -> MessagePack)
  KEYS[2] constraint state prefix (lua/lib/preamble_1_constraint_context.lua)
  ARGV[1] now (ms since the epoch)
  ARGV[2] events channel: "s <due_ms>" when a pair's rate holds jobs until then
  ARGV[3..] five per job: its shard, its lease (the attempt's name, "<shard>-<field>:<attempt>"),
            its ready stamp (9 base62 characters, µs), its attempt's deadline (ms), its
            constraints (MessagePack [name1, key1, ...], as in R_CONSTRAINTS)
  Returns: one integer per job, in order: 0 admitted (its leases and rate steps taken); i > 0
           refused by its i-th constraint (pair i of R_CONSTRAINTS), nothing taken.
]]
local ad = {cx = constraint_context(KEYS[1], KEYS[2], tonumber(ARGV[1])), channel = ARGV[2],
            started = {}}
local out = {}
for a = 3, #ARGV, 5 do
  local stamp = digits(base62_decode(ARGV[a + 2]))
  out[#out + 1] = admit_job(ad, ARGV[a], ARGV[a + 1], stamp, ARGV[a + 3],
                            cmsgpack.unpack(ARGV[a + 4]))
end
admitted_counts(ad)
return out
