#!lua
--[[ removeConstraint: deletes a constraint's definition, moves the version on and tells every
  master, in one step. The jobs it held are let go: its held pairs are due in wake_due now
  (lua/lib/preamble_1_recheck_held.lua), and wakeConstraints wakes all of them; its leases go
  as their attempts end, its rate state expires by itself.
  Memory: refused while Redis is over maxmemory, before it writes anything: constraint changes
          wait for memory together: the stored jobs are matched again after it (reclassifyJobs,
          refused too).
  KEYS[1] constraints hash (name -> definition, MessagePack)
  KEYS[2] constraints_version counter
  KEYS[3] constraint state prefix (lua/lib/preamble_1_constraint_context.lua)
  ARGV[1] the name
  ARGV[2] events channel: gets "c <version>"
  ARGV[3] now (ms since the epoch)
  Returns: {1, version} removed, version the new one; {-1, version} no such constraint.
]]
local constraints, version_key = KEYS[1], KEYS[2]
if rcall('HDEL', constraints, ARGV[1]) == 0 then
  return {-1, tonumber(rcall('GET', version_key)) or 0}
end
recheck_held(KEYS[3], ARGV[1], ARGV[3])
local version = rcall('INCR', version_key)
rcall('SPUBLISH', ARGV[2], 'c ' .. version)
return {1, version}
