-- Shared by the scripts (prepended at build time); takes no KEYS or ARGV of its own.
--[[ Makes up to `n` of a constraint key's held jobs ready again, oldest first: at the front of
  their ready list with their old stamp (they keep their turn), announced to every master. A
  woken job another constraint still holds is held again when a scheduler reaches it; nothing
  counts an attempt. Returns how many were woken.
]]
local function wake_held(cx, name, key, n)
  local ck = name .. '#' .. key
  local held, woken = cx.c .. 'held:' .. ck, {}
  while #woken < n do
    local popped = rcall('ZPOPMIN', held)
    if #popped == 0 then break end
    if rcall('HINCRBY', cx.c .. 'waiting:' .. name, key, -1) <= 0 then
      rcall('HDEL', cx.c .. 'waiting:' .. name, key)
    end
    local dash = string.find(popped[1], '-', 1, true)
    local shard, field = string.sub(popped[1], 1, dash - 1), string.sub(popped[1], dash + 1)
    local sk = shard_keys(cx, shard)
    local record = load_record(sk.jobs, field)
    -- Anything else (cancelled, or woken already by another way) is dropped.
    if record and record[R_STATE] == S_QUEUED and record[R_BLOCKED_BY] == name then
      record[R_BLOCKED_BY] = ''
      save_record(sk.jobs, field, record)
      woken[#woken + 1] = {shard = shard, queue = sk.ready_prefix .. record[R_NAME],
                           name = record[R_NAME], priority = record[R_PRIORITY],
                           member = record[R_READY_STAMP] .. field}
    end
  end
  -- Each goes to the front of its list: the youngest first, so the oldest ends up in front.
  for i = #woken, 1, -1 do
    make_ready(woken[i].queue, woken[i].priority, {woken[i].member}, true)
  end
  for _, w in ipairs(woken) do
    announce_ready(cx.channel, w.shard, w.name, w.priority, w.member)
  end
  if rcall('EXISTS', held) == 0 then rcall('ZREM', cx.c .. 'rate_due', ck) end
  return #woken
end
