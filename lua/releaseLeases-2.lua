#!lua flags=allow-oom
--[[ releaseLeases: attempts of constrained jobs ended (answered, failed, given back, reaped):
  their leases go, and for each pair whose limit that frees, as many of the jobs it holds as
  may start now are handed the slots, oldest first across the shards (wake orders, lua/lib/
  preamble_2_order_wakes.lua, which the master runs with unholdJobs in their shards). Nothing
  polls: the freed slot is handed on by the call that frees it. A lease is named by its attempt,
  so releasing an attempt that already ended (a late answer, a reaped job) changes nothing; a
  release that is lost (its master stopped) is made up for at the lease's deadline, when it
  stops counting and wakeConstraints looks at the pair (admitJobs put it in wake_due then).
  A pair limited by a rate alone waits for its due time, not for a release.
  Memory: runs while Redis is over maxmemory (allow-oom): it removes leases.
  KEYS[1] constraint defs: the definitions hash (name -> MessagePack)
  KEYS[2] constraint state prefix (lua/lib/preamble_1_constraint_context.lua)
  ARGV[1] now (ms since the epoch)
  ARGV[2..] two per job: its lease ("<shard>-<field>:<attempt>", as admitJobs took it), its
            constraints (MessagePack [name1, key1, ...], as in R_CONSTRAINTS)
  Returns: the wake orders, five values each: name, key, shard, n, bound (-1: none).
]]
local cx = constraint_context(KEYS[1], KEYS[2], tonumber(ARGV[1]))
local freed, order, out = {}, {}, {}
for a = 2, #ARGV, 2 do
  local lease, cons = ARGV[a], cmsgpack.unpack(ARGV[a + 1])
  for i = 1, #cons, 2 do
    local name, key = cons[i], cons[i + 1]
    local ck = name .. '#' .. key
    local leases = cx.c .. 'lease:' .. ck
    if rcall('ZREM', leases, lease) == 1 then
      if rcall('EXISTS', leases) == 0 then rcall('SREM', cx.c .. 'lease_keys:' .. name, key) end
      if not freed[ck] then
        freed[ck] = {name = name, key = key, n = 0}
        order[#order + 1] = ck
      end
      freed[ck].n = freed[ck].n + 1
    end
  end
end
for _, ck in ipairs(order) do
  local f = freed[ck]
  if rcall('EXISTS', cx.c .. 'held_shards:' .. ck) == 1 then
    local limits = constraint_limits(cx, f.name)
    if not limits or limits.concurrency then
      local n = room(cx, f.name, f.key, f.n)
      if n > 0 then order_wakes(cx, f.name, f.key, n, out) end
    end
  end
end
return out
