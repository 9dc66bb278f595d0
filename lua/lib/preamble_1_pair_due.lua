-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- Pair ck (name#key, under the {c} state of constraint_context cx) is due at `due` (ms): wake_due
-- keeps the earlier of that and what it had, and only a time that moved earlier is announced on
-- the {c} events channel ("s <due_ms>"), so promoters call wakeConstraints then.
local function pair_due(cx, ck, due, channel)
  if rcall('ZADD', cx.c .. 'wake_due', 'LT', 'CH', due, ck) == 1 then
    rcall('SPUBLISH', channel, string.format('s %d', due))
  end
end
