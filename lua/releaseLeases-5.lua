#!lua flags=allow-oom
--[[ releaseLeases: attempts of constrained jobs ended (answered, failed, given back, reaped):
  their leases go, and the slots they free are handed to the jobs their pairs hold
  (lua/lib/preamble_4_free_leases.lua). A release that is lost (its master stopped) is made up
  for at the lease's deadline, when it stops counting and wakeConstraints looks at the pair
  (admitJobs put it in wake_due then). On one Redis completeJobs releases the leases of the jobs
  it finishes in its own step; the other ends of attempts come here.
  Memory: runs while Redis is over maxmemory (allow-oom): it removes leases.
  KEYS[1] constraint defs: the definitions hash (name -> MessagePack)
  KEYS[2] constraint state prefix (lua/lib/preamble_1_constraint_context.lua)
  KEYS[3] jobs prefix of shard 0; only when one Redis holds every key (not on a cluster): then the
          wake orders run in this same step (lua/lib/preamble_5_run_wakes.lua), in every shard,
          whose keys are named from shard 0's (lua/lib/preamble_1_shard_keys_like.lua)
  KEYS[4] ready prefix of shard 0; with KEYS[3]
  KEYS[5] held prefix of shard 0 (lua/lib/preamble_1_holds_of.lua); with KEYS[3]
  ARGV[1] now (ms since the epoch)
  ARGV[2] events channel of shard 0 (announce_ready for every job woken); with KEYS[3], else ''
  ARGV[3] constraint channel: the {c} events channel ("s <due_ms>" when a pair is due again)
  ARGV[4..] three per job: its lease ("<shard>-<field>:<attempt>", as admitJobs took it), its
            constraints (MessagePack [name1, key1, ...], as in R_CONSTRAINTS), unsent ('1': the
            attempt was never sent, a job reserved ahead and handed back: the rate steps it took
            are given back, since a rate counts dispatches actually sent; '0')
  Returns: the wake orders, five values each: name, key, shard, n, bound (-1: none); none
           when the shards' keys were given (they ran here).
]]
local cx = constraint_context(KEYS[1], KEYS[2], tonumber(ARGV[1]), KEYS[3] ~= nil)
local leases, out = {}, {}
for a = 4, #ARGV, 3 do
  leases[#leases + 1] = {ARGV[a], cmsgpack.unpack(ARGV[a + 1]), ARGV[a + 2] == '1'}
end
free_leases(cx, leases, out, ARGV[3])
if cx.joined then
  run_wakes(cx, out, shard_keys_like(KEYS[3], KEYS[4], KEYS[5], ARGV[2]), ARGV[3])
  return {}
end
return out
