#!lua flags=allow-oom
--[[ registerWorker: registers a worker endpoint, or updates the registration of its url, which
  keeps its id (a heartbeat is the same call again). Ids are "w" .. a counter, never reused.
  Memory: runs while Redis is over maxmemory (allow-oom): a registration is a few hundred bytes,
          and workers drain the queues, which is how memory comes back: they must be able to
          register and renew while Redis is full.
  KEYS[1] workers hash (id -> registration JSON)
  KEYS[2] worker_urls hash (url -> id)
  KEYS[3] worker_seq counter
  ARGV[1] the url
  ARGV[2] the registration JSON: {url, names, concurrency, headers, ttl_ms, registered_at_ms,
          expires_at_ms, secret_hex?} (secret_hex: the dispatch-signing secret, hex; replaced
          with the rest, so an update without it makes the worker unsigned)
  ARGV[3] events channel: gets "w" (masters reload the worker list)
  Returns: {id, created}: created is 1 for a new url, 0 for an update.
]]
local workers, urls, seq = KEYS[1], KEYS[2], KEYS[3]
local url = ARGV[1]
local id = rcall('HGET', urls, url)
local created = 0
if not id then
  id = 'w' .. rcall('INCR', seq)
  rcall('HSET', urls, url, id)
  created = 1
end
rcall('HSET', workers, id, ARGV[2])
rcall('SPUBLISH', ARGV[3], 'w')
return {id, created}
