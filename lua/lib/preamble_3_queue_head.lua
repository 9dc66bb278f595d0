-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- The head of `queue` (lua/lib/preamble_1_ready_list.lua): the first member of its best
-- priority's list, and that priority; '' and '' when it is empty. The members of cancelled jobs
-- met on the way (their record is gone: only cancelling removes a queued record) are dropped, at
-- most 1000 of them per queue and call, so one call stays short however many there are; past
-- that the head answered is '' and '' until a later call drops the rest.
local function queue_head(jobs, queue)
  local dropped = 0
  while dropped < 1000 do
    local best = rcall('ZRANGE', queue, '0', '0')
    if #best == 0 then break end
    local list = ready_list(queue, best[1])
    local member = rcall('LINDEX', list, '0')
    if member and rcall('HEXISTS', record_at(jobs, string.sub(member, 10))) == 1 then
      return member, best[1]
    end
    if member then
      rcall('LPOP', list)
      dropped = dropped + 1
    end
    forget_if_empty(queue, best[1])
  end
  return '', ''
end
