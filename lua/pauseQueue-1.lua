#!lua flags=allow-oom
--[[ pauseQueue: pauses the queue of a name (its jobs stay ready but are not dispatched) or
  resumes it, and tells every master's scheduler, in one step.
  Memory: runs while Redis is over maxmemory (allow-oom): it adds one queue name at most, and an
          operator may want to hold back queues whose jobs keep results while memory is short.
  KEYS[1] paused set (names of paused queues)
  ARGV[1] the name
  ARGV[2] pause: 1 pauses, 0 resumes
  ARGV[3] events channel: gets "q" (schedulers reload the paused set), changed or not
  Returns: 1 changed; 0 already so: nothing changed but the announcement.
]]
local paused, name = KEYS[1], ARGV[1]
local changed
if ARGV[2] == '1' then
  changed = rcall('SADD', paused, name)
else
  changed = rcall('SREM', paused, name)
end
rcall('SPUBLISH', ARGV[3], 'q')
return changed
