-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- Makes `members` (all of one priority) ready: at the back, as the newest, or with `front` in
-- their turn near the front, where jobs given back had theirs: each before the first of the
-- list's first 64 members with a later stamp (a member begins with its fixed-width stamp, so
-- members sort as their stamps do, in byte order: bytes_less, not Lua's locale-bound '<'), so
-- jobs given back one by one, in any order, line up as they were pushed. Past 64 older members it goes to the front (a job given back is rarely
-- behind more).
local function make_ready(queue, priority, members, front)
  local p = digits(priority)
  local list = ready_list(queue, p)
  if not front then
    rcall('RPUSH', list, unpack(members))
  else
    for _, member in ipairs(members) do
      local head = rcall('LRANGE', list, 0, 63)
      local later
      for i = 1, #head do
        if bytes_less(member, head[i]) then
          later = head[i]
          break
        end
      end
      if later then
        rcall('LINSERT', list, 'BEFORE', later, member)
      elseif #head < 64 then
        rcall('RPUSH', list, member)
      else
        rcall('LPUSH', list, member)
      end
    end
  end
  rcall('ZADD', queue, p, p)
end
