#!lua flags=no-writes
--[[ constraintStats: every constraint's definition with its totals, for /metrics at scrape time:
  jobs waiting (held) over all its keys, live leases over all its keys (running; a lease whose
  expiry has passed, its master dead, does not count), and the starts and holds counted in the
  counters hash since the store was created. Changes nothing. Costs one HVALS per constraint and
  one ZCOUNT per key in its lease-keys set: meant for a scrape every few seconds, not a hot path.
  Memory: reads only (no-writes), so it runs while Redis is over maxmemory.
  KEYS[1] constraints hash (name -> definition, MessagePack)
  KEYS[2] counters hash (started:<name>, deferred:<name> -> count)
  KEYS[3] waiting prefix: a constraint's waiting hash (key value -> jobs held) is this followed
          by its name
  KEYS[4] lease-keys prefix: a constraint's lease-keys set is this followed by its name
  KEYS[5] lease prefix: a key's lease zset is this, the constraint's name, '#' and the key value
          (lease id, score = expiry ms)
  ARGV[1] now (ms since the epoch)
  Returns: {{name, definition, waiting, running, started, deferred} ...}, one per constraint, by
           name; started and deferred are 0 before the first start or hold.
]]
local defs, counters = KEYS[1], KEYS[2]
local waiting_prefix, lease_keys_prefix, lease_prefix = KEYS[3], KEYS[4], KEYS[5]
local now = tonumber(ARGV[1])

local function waiting_of(name)
  local n = 0
  for _, count in ipairs(rcall('HVALS', waiting_prefix .. name)) do
    n = n + math.max(tonumber(count) or 0, 0)
  end
  return n
end

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
  local deferred = tonumber(rcall('HGET', counters, 'deferred:' .. name)) or 0
  out[#out + 1] = {name, definition[name], waiting_of(name), running_of(name), started, deferred}
end
return out
