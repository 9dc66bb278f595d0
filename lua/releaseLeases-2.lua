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
  ARGV[1] now (ms since the epoch)
  ARGV[2..] two per job: its lease ("<shard>-<field>:<attempt>", as admitJobs took it), its
            constraints (MessagePack [name1, key1, ...], as in R_CONSTRAINTS)
  Returns: the wake orders, five values each: name, key, shard, n, bound (-1: none).
]]
local cx = constraint_context(KEYS[1], KEYS[2], tonumber(ARGV[1]))
local leases, out = {}, {}
for a = 2, #ARGV, 2 do leases[#leases + 1] = {ARGV[a], cmsgpack.unpack(ARGV[a + 1])} end
free_leases(cx, leases, out)
return out
