#!lua flags=no-writes
--[[ constraintStats: every constraint's definition with what {c} counts for it, for /metrics at
  scrape time: live leases over all its keys (running; a lease whose expiry has passed, its
  master dead, does not count) and the starts counted in the counters hash since the store was
  created. The jobs it holds and its holds are counted in the shards (their tallies hashes,
  summed by the master). Changes nothing. Costs one ZCOUNT per key in a constraint's lease-keys
  set: meant for a scrape every few seconds, not a hot path.
  Memory: reads only (no-writes), so it runs while Redis is over maxmemory.
  KEYS[1] constraints hash (name -> definition, MessagePack)
  KEYS[2] counters hash (started:<name> -> count)
  KEYS[3] lease-keys prefix: a constraint's lease-keys set is this followed by its name
  KEYS[4] lease prefix: a key's lease zset is this, the constraint's name, '#' and the key value
          (lease id, score = expiry ms)
  ARGV[1] now (ms since the epoch)
  Returns: {{name, definition, running, started} ...}, one per constraint, by name; started is
           0 before the first start.
]]
local defs, counters, lease_keys_prefix, lease_prefix = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now = tonumber(ARGV[1])

local function running_of(name)
  local n = 0
  for _, key in ipairs(rcall('SMEMBERS', lease_keys_prefix .. name)) do
    n = n + rcall('ZCOUNT', lease_prefix .. name .. '#' .. key, now, '+inf')
  end
  return n
end

local flat = rcall('HGETALL', defs)
local names, definition = {}, {}
for i = 1, #flat, 2 do
  names[#names + 1] = flat[i]
  definition[flat[i]] = flat[i + 1]
end
table.sort(names)
local out = {}
for _, name in ipairs(names) do
  local started = tonumber(rcall('HGET', counters, 'started:' .. name)) or 0
  out[#out + 1] = {name, definition[name], running_of(name), started}
end
return out
