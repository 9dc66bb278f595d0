#!lua flags=allow-oom
--[[ removeWorker: deletes a worker's registration with its slot holdings and stats. Jobs already
  sent to it finish normally; it gets no new ones.
  Memory: runs while Redis is over maxmemory (allow-oom): it removes a registration.
  KEYS[1] workers hash (id -> registration JSON)
  KEYS[2] worker_urls hash (url -> id)
  KEYS[3] slots hash of the worker (master id -> slots held)
  KEYS[4] stats hash of the worker
  ARGV[1] the worker's id
  ARGV[2] events channel: gets "w"
  Returns: 1 removed; -1 no such worker.
]]
local workers, urls, slots, wstats = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id = ARGV[1]
local json = rcall('HGET', workers, id)
if not json then return -1 end
forget_worker(workers, urls, id, json)
rcall('DEL', slots, wstats)
rcall('SPUBLISH', ARGV[2], 'w')
return 1
