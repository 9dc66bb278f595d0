#!lua flags=no-writes
--[[ constraintState: what one constraint holds now, per key: the jobs it holds back, which the
  shards count (the master sums their waiting hashes and passes them in), and its live leases,
  read here (docs/REDIS.md, "Constraints"). Changes nothing. A key counts when it has waiting
  jobs or live leases; a lease whose expiry has passed (its master died) is not running. Costs
  one ZCOUNT per key in the lease-keys set and a sort of the keys: meant for an operator's look,
  not for a hot path.
  Memory: reads only (no-writes), so it runs while Redis is over maxmemory.
  KEYS[1] lease-keys set of the constraint (key values that have a lease zset)
  KEYS[2] lease prefix of the constraint: a key's lease zset is this followed by the key value
          (lease id, score = expiry ms)
  KEYS[3] tat prefix of the constraint: a key's GCRA theoretical arrival time (ms), then its
          emission interval (lua/lib/preamble_1_store_tat.lua), is the string
          at this followed by the key value
  ARGV[1] now (ms since the epoch)
  ARGV[2] top: how many keys to list, those with the most waiting first
  ARGV[3..] two per key with waiting jobs: the key value, its jobs waiting over all shards
  Returns: {waiting, running, keys, {key, waiting, running, tat_ms} ...} with at most `top`
           entries, by waiting (most first), then running, then key; tat_ms is -1 when the key
           has no rate state.
]]
local lease_keys, leases, tats = KEYS[1], KEYS[2], KEYS[3]
local now, top = tonumber(ARGV[1]), tonumber(ARGV[2])
local per_key = {}
for a = 3, #ARGV, 2 do
  local n = tonumber(ARGV[a + 1]) or 0
  if n > 0 then per_key[ARGV[a]] = {n, 0} end
end
for _, key in ipairs(rcall('SMEMBERS', lease_keys)) do
  local running = rcall('ZCOUNT', leases .. key, now, '+inf')
  if running > 0 then
    local entry = per_key[key] or {0, 0}
    entry[2] = running
    per_key[key] = entry
  end
end
local waiting, running, list = 0, 0, {}
for key, entry in pairs(per_key) do
  waiting = waiting + entry[1]
  running = running + entry[2]
  list[#list + 1] = {key, entry[1], entry[2]}
end
table.sort(list, function(a, b)
  if a[2] ~= b[2] then return a[2] > b[2] end
  if a[3] ~= b[3] then return a[3] > b[3] end
  return a[1] < b[1]
end)
local out = {waiting, running, #list}
for i = 1, math.min(top, #list) do
  local entry = list[i]
  local stored = rcall('GET', tats .. entry[1])
  local tat = stored and tonumber(string.match(stored, '^%S+')) or -1
  out[#out + 1] = {entry[1], entry[2], entry[3], tat}
end
return out
