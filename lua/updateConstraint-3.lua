#!lua
--[[ updateConstraint: replaces an existing constraint's definition, moves the version on and
  tells every master, in one step. A change that was computed from a definition read earlier (a
  PATCH merges in C++) passes the bytes it read as `expected`: the write happens only if they are
  still what is stored, so two racing changes cannot lose one another (the caller reads again and
  retries). A definition equal to the stored one changes nothing and announces nothing. The
  jobs the constraint holds are looked at again (its held pairs are due in wake_due now,
  lua/lib/preamble_1_recheck_held.lua): a raised limit or a resumed constraint lets them go.
  Memory: refused while Redis is over maxmemory, before it writes anything: a definition may grow,
          and the stored jobs are matched again after it (reclassifyJobs, refused too).
  KEYS[1] constraints hash (name -> definition, MessagePack)
  KEYS[2] constraints_version counter
  KEYS[3] constraint state prefix (lua/lib/preamble_1_constraint_context.lua)
  ARGV[1] the name
  ARGV[2] the new definition (api::encode_constraint)
  ARGV[3] expected: the definition the change was made from; '' replaces whatever is stored
  ARGV[4] events channel: gets "c <version>" when something changed
  ARGV[5] now (ms since the epoch)
  Returns: {1, version} replaced, version the new one; {0, version} it was already so;
           {-1, version} no such constraint; {-2, version} it changed since it was read:
           nothing changed.
]]
local constraints, version_key = KEYS[1], KEYS[2]
local name, definition, expected = ARGV[1], ARGV[2], ARGV[3]
local current = rcall('HGET', constraints, name)
local version = tonumber(rcall('GET', version_key)) or 0
if not current then return {-1, version} end
if expected ~= '' and current ~= expected then return {-2, version} end
if current == definition then return {0, version} end
rcall('HSET', constraints, name, definition)
recheck_held(KEYS[3], name, ARGV[5])
version = rcall('INCR', version_key)
rcall('SPUBLISH', ARGV[4], 'c ' .. version)
return {1, version}
