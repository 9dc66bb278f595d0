-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ Wakes up to `n` of the jobs the pair (name, key) holds in one shard, oldest first, none with
  a ready stamp (µs) above `bound` (-1: no bound). Each goes to the front of its ready list with
  its old stamp (it keeps its turn) and is announced on the shard's channel; a job that is no
  longer held for the pair (cancelled, matched anew) is dropped. Used by unholdJobs (a wake
  order run in its shard, on a cluster) and by run_wakes (the orders run in the step that gave
  them, when one Redis holds every key).
  jobs, ready_prefix: the shard's jobs and ready prefixes; h: holds_of(<the shard's prefix>)
  joined   true when the report is used in this same step (lua/lib/preamble_5_run_wakes.lua),
           which needs neither the settled count nor the time
  Returns woken, oldest, settled, at: the jobs made ready; the ready stamp (µs) of the oldest
  job the pair still holds there, -1 when none; the refused jobs settled there for the pair
  since the last wake (the count starts again at 0); when this ran (µs, TIME). Joined: settled
  and at are 0. Then oldest as Redis wrote it (nil when none), to be given back as it is.
]]
local function unhold_pair(jobs, ready_prefix, h, channel, shard, name, key, n, bound, joined)
  local ck = name .. '#' .. key
  local held = h.held .. ck
  -- The n oldest and the one after them, in one read: the first not taken (beyond n, or above
  -- the bound) is the oldest left.
  local first = rcall('ZRANGE', held, '0', digits(n), 'WITHSCORES')
  local popped, oldest, oldest_s = {}, -1, nil
  for i = 1, #first, 2 do
    local stamp = tonumber(first[i + 1])
    if #popped == n or (bound >= 0 and stamp > bound) then
      oldest, oldest_s = stamp, first[i + 1]
      break
    end
    popped[#popped + 1] = first[i]
  end
  local woken = {}
  if #popped > 0 then
    rcall('ZREM', held, unpack(popped))
    unheld(h, name, key, #popped)
  end
  for _, field in ipairs(popped) do
    local record = load_record(jobs, field)
    -- Anything else (cancelled, or matched anew) is dropped.
    if record and record[R_STATE] == S_QUEUED and record[R_BLOCKED_BY] == name then
      record[R_BLOCKED_BY] = ''
      save_record(jobs, field, record)
      woken[#woken + 1] = {queue = ready_prefix .. record[R_NAME], name = record[R_NAME],
                           priority = record[R_PRIORITY], member = record[R_READY_STAMP] .. field}
    end
  end
  -- Each goes to the front of its list: the youngest first, so the oldest ends up in front.
  for i = #woken, 1, -1 do
    make_ready(woken[i].queue, woken[i].priority, {woken[i].member}, true)
  end
  for _, w in ipairs(woken) do announce_ready(channel, shard, w.name, w.priority, w.member) end
  if joined then return #woken, oldest, 0, 0, oldest_s end
  local settled = tonumber(rcall('HGET', h.settled, ck)) or 0
  if settled > 0 then rcall('HDEL', h.settled, ck) end
  local time = rcall('TIME')
  return #woken, oldest, settled, tonumber(time[1]) * 1000000 + tonumber(time[2]), oldest_s
end
