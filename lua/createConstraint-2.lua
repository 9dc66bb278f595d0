#!lua
--[[ createConstraint: adds a constraint under a name no constraint has yet, moves the version on
  and tells every master, in one step (so two masters creating one name cannot both succeed).
  Memory: refused while Redis is over maxmemory, before it writes anything: it adds a definition,
          and the stored jobs are matched again after it (reclassifyJobs, refused too).
  KEYS[1] constraints hash (name -> definition, MessagePack)
  KEYS[2] constraints_version counter
  ARGV[1] the name
  ARGV[2] the definition: the constraint's map as MessagePack (api::encode_constraint)
  ARGV[3] events channel: gets "c <version>" (masters reload their constraints)
  Returns: {1, version} created, version the new one; {-1, version} the name is taken: nothing
           changed.
]]
local constraints, version_key = KEYS[1], KEYS[2]
local name = ARGV[1]
if rcall('HEXISTS', constraints, name) == 1 then
  return {-1, tonumber(rcall('GET', version_key)) or 0}
end
rcall('HSET', constraints, name, ARGV[2])
local version = rcall('INCR', version_key)
rcall('SPUBLISH', ARGV[3], 'c ' .. version)
return {1, version}
