-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- Takes a ready job's `member` out of the list of `priority` in `queue` when it is at either end
-- (a job that leaves soon after it came, or the next to run); elsewhere it stays (finding it
-- would cost the list's length), and reserveJobs and browseJobs skip it because the job's
-- record no longer names that stamp in that state. A list left empty leaves the priorities.
local function leave_ready(queue, priority, member)
  local list = ready_list(queue, priority)
  if rcall('LINDEX', list, '0') == member then
    rcall('LPOP', list)
  elseif rcall('LINDEX', list, '-1') == member then
    rcall('RPOP', list)
  end
  if rcall('EXISTS', list) == 0 then rcall('ZREM', queue, priority) end
end
