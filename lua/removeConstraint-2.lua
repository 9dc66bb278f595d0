#!lua
--[[ removeConstraint: deletes a constraint's definition, moves the version on and tells every
  master, in one step. Its live state (waiting counts, leases, rate state) is the dispatch side's
  to release: jobs it held become ready once the masters have reloaded.
  Memory: refused while Redis is over maxmemory, before it writes anything: constraint changes
          wait for memory together: the stored jobs are matched again after it (reclassifyJobs,
          refused too).
  KEYS[1] constraints hash (name -> definition, MessagePack)
  KEYS[2] constraints_version counter
  ARGV[1] the name
  ARGV[2] events channel: gets "c <version>"
  Returns: {1, version} removed, version the new one; {-1, version} no such constraint.
]]
local constraints, version_key = KEYS[1], KEYS[2]
if rcall('HDEL', constraints, ARGV[1]) == 0 then
  return {-1, tonumber(rcall('GET', version_key)) or 0}
end
local version = rcall('INCR', version_key)
rcall('SPUBLISH', ARGV[2], 'c ' .. version)
return {1, version}
