#!lua flags=allow-oom
--[[ beatMaster: a master says it is alive until a time. acquireSlots drops the slot holdings of
  a master whose heartbeat lapsed, so a live master must keep beating, also while Redis is full.
  Memory: runs while Redis is over maxmemory (allow-oom): it sets one score in a sorted set that
          has this master already (a new master adds one member), and a lapsed heartbeat would
          let other masters take slots this master still uses.
  KEYS[1] masters zset (master id, score = heartbeat expiry ms)
  ARGV[1] the master's id
  ARGV[2] its heartbeat expiry (ms since the epoch)
  Returns: 1.
]]
rcall('ZADD', KEYS[1], tonumber(ARGV[2]), ARGV[1])
return 1
