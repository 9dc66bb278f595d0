#!lua flags=allow-oom
--[[ expireWorkers: removes registrations with a ttl that were not renewed in time (expires_at_ms
  in their JSON is > 0 and before now), with their slot holdings and stats, in one step (a
  worker is never half removed).
  Memory: runs while Redis is over maxmemory (allow-oom): it removes registrations.
  KEYS[1] workers hash (id -> registration JSON)
  KEYS[2] worker_urls hash (url -> id)
  KEYS[3] slots prefix: the slots hash of worker W is KEYS[3] .. W (master id -> slots held)
  KEYS[4] stats prefix: the stats hash of worker W is KEYS[4] .. W
  ARGV[1] now (ms since the epoch)
  ARGV[2] events channel: gets "w" when any was removed
  Returns: the ids removed (array, possibly empty).
]]
local workers, urls, slots_prefix, stats_prefix = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now = tonumber(ARGV[1])
local all = rcall('HGETALL', workers)
local removed = {}
for i = 1, #all, 2 do
  local id, json = all[i], all[i + 1]
  local registration = decode_registration(json)
  local expires = registration and tonumber(registration.expires_at_ms)
  if expires and expires > 0 and expires < now then
    forget_worker(workers, urls, id, json)
    rcall('DEL', slots_prefix .. id, stats_prefix .. id)
    removed[#removed + 1] = id
  end
end
if #removed > 0 then rcall('SPUBLISH', ARGV[2], 'w') end
return removed
