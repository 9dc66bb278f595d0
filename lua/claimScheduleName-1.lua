#!lua flags=allow-oom
--[[ claimScheduleName: compare-and-set of a schedule name's claim in its home shard (the shard
  of a hash of the name): "<shard> <token>" says which shard the schedule lives in and the token
  of its record there, "<shard> <token> <from shard> <from token>" also the record it is moving
  from. One claim per name makes a name unique across shards, and every change of where a
  schedule lives goes through here (src/schedules/schedule_store.hpp says in which order).
  Memory: runs while Redis is over maxmemory (allow-oom): a create that cannot store its record
          must be able to give its claim back, and a claim is a few bytes.
  KEYS[1] schedule homes hash of the name's home shard (name -> claim)
  ARGV[1] the name
  ARGV[2] expected: the claim read before ('' none)
  ARGV[3] the new claim ('' removes it)
  Returns: {1, ''} done; {0, current} the claim is not the expected one ('' none): nothing
           changed.
]]
local homes = KEYS[1]
local name, expected, claim = ARGV[1], ARGV[2], ARGV[3]
local current = rcall('HGET', homes, name) or ''
if current ~= expected then return {0, current} end
if claim == '' then
  rcall('HDEL', homes, name)
else
  rcall('HSET', homes, name, claim)
end
return {1, ''}
