--[[ expireWorkers: removes registrations with a ttl that were not renewed in time (expires_at_ms
  in their JSON is > 0 and before now). The slots and stats hashes of the removed workers are
  not among this script's keys: the caller deletes them by the ids returned.
  KEYS[1] workers hash (id -> registration JSON)
  KEYS[2] worker_urls hash (url -> id)
  ARGV[1] now (ms since the epoch)
  ARGV[2] events channel: gets "w" when any was removed
  Returns: the ids removed (array, possibly empty).
]]
local workers, urls = KEYS[1], KEYS[2]
local now = tonumber(ARGV[1])
local all = rcall('HGETALL', workers)
local removed = {}
for i = 1, #all, 2 do
  local registration = decode_registration(all[i + 1])
  local expires = registration and tonumber(registration.expires_at_ms)
  if expires and expires > 0 and expires < now then
    forget_worker(workers, urls, all[i], all[i + 1])
    removed[#removed + 1] = all[i]
  end
end
if #removed > 0 then rcall('PUBLISH', ARGV[2], 'w') end
return removed
