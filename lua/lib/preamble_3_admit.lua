-- Shared by the scripts (prepended at build time); takes no KEYS or ARGV of its own.
--[[ Whether every constraint a job matched lets it start now, and if so, takes them all at once:
  a lease per (constraint, key) until the attempt's deadline (a lease that outlives a dead master
  stops counting by itself: running = ZCOUNT now +inf) and, for a rate, one step of the key's
  GCRA theoretical arrival time (tat). A key's held jobs go first: a job younger than the oldest
  held one of any of its keys waits behind it.
  cons   {name1, key1, ...} (R_CONSTRAINTS)
  job_id "<shard>-<field>", the lease's member
  stamp  the job's ready stamp as a number (base62_decode of R_READY_STAMP)
  Returns nil when admitted (and taken), else {name, key, due_ms or nil}: the constraint that
  holds it, and for a rate when its next start is allowed.
]]
local function admit(cx, cons, job_id, stamp, deadline)
  for i = 1, #cons, 2 do
    local name, key = cons[i], cons[i + 1]
    local limits = constraint_limits(cx, name)
    if limits then
      local ck = name .. '#' .. key
      if limits.paused then return {name, key} end
      local oldest = rcall('ZRANGE', cx.c .. 'held:' .. ck, 0, 0, 'WITHSCORES')
      if oldest[1] and tonumber(oldest[2]) < stamp then return {name, key} end
      if limits.concurrency and
         rcall('ZCOUNT', cx.c .. 'lease:' .. ck, cx.now, '+inf') >= limits.concurrency then
        return {name, key}
      end
      if limits.emission_ms then
        local tat = tonumber(rcall('GET', cx.c .. 'tat:' .. ck)) or cx.now
        local allowed_at = tat - limits.burst * limits.emission_ms
        if allowed_at > cx.now then return {name, key, math.ceil(allowed_at)} end
      end
    end
  end
  for i = 1, #cons, 2 do
    local name, key = cons[i], cons[i + 1]
    local limits = constraint_limits(cx, name)
    if limits then
      local ck = name .. '#' .. key
      rcall('ZADD', cx.c .. 'lease:' .. ck, deadline, job_id)
      rcall('SADD', cx.c .. 'lease_keys:' .. name, key)
      rcall('HINCRBY', cx.c .. 'counters', 'started:' .. name, 1)
      if limits.emission_ms then
        local tat_key = cx.c .. 'tat:' .. ck
        local tat = math.max(tonumber(rcall('GET', tat_key)) or cx.now, cx.now) +
                    limits.emission_ms
        -- Past tat + burst steps the key is as good as new: the key may go.
        local keep_ms = math.ceil(tat - cx.now + limits.burst * limits.emission_ms) + 1
        rcall('SET', tat_key, string.format('%.3f', tat), 'PX', keep_ms)
        -- Jobs still held in the key get their turn when its next start is allowed.
        if rcall('EXISTS', cx.c .. 'held:' .. ck) == 1 then
          local due = math.ceil(tat - limits.burst * limits.emission_ms)
          rcall('ZADD', cx.c .. 'rate_due', 'LT', due, ck)
          rcall('SPUBLISH', cx.channel, string.format('s %d', due))
        end
      end
    end
  end
  return nil
end
