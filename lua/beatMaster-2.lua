#!lua flags=allow-oom
--[[ beatMaster: a master says it is alive until a time, and that its build's script library is
  in use until then. acquireSlots drops the slot holdings of a master whose heartbeat lapsed, so
  a live master must keep beating, also while Redis is full. The libraries set lets a master
  delete the script library of a build no master has run for a while (ScriptLibraries).
  Memory: runs while Redis is over maxmemory (allow-oom): it sets one score in each of two sorted
          sets that have this master and its library already (a new master or build adds one
          member), and a lapsed heartbeat would let other masters take slots this master still
          uses.
  KEYS[1] masters zset (master id, score = heartbeat expiry ms)
  KEYS[2] libraries zset (script library name, score = the latest heartbeat expiry ms of a
          master that uses it)
  ARGV[1] the master's id
  ARGV[2] its heartbeat expiry (ms since the epoch)
  ARGV[3] the name of its script library (jq_<hex>)
  Returns: {before, now_us}: the master's heartbeat expiry before this one (ms), 0 when it had
           none: the master tells from it that its heartbeat lapsed (a stall), when other
           masters may have dropped its slot holdings; and this Redis's clock (microseconds
           since the epoch), which every master sets its clock by (src/util/shared_clock.hpp):
           the heartbeats' Redis is the one clock all masters read.
]]
local expiry = tonumber(ARGV[2])
local before = tonumber(rcall('ZSCORE', KEYS[1], ARGV[1])) or 0
rcall('ZADD', KEYS[1], expiry, ARGV[1])
rcall('ZADD', KEYS[2], 'GT', expiry, ARGV[3])
local time = rcall('TIME')
return {before, tonumber(time[1]) * 1000000 + tonumber(time[2])}
