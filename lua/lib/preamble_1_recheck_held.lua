-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- After a constraint changed or went: each of its pairs that holds jobs (held_keys, under the
-- state prefix <p>:{c}:) is due in wake_due now, so wakeConstraints lets go of what the change
-- allows. In the same step as the change: a master that stops right after it loses nothing.
local function recheck_held(state, name, now_ms)
  for _, key in ipairs(rcall('SMEMBERS', state .. 'held_keys:' .. name)) do
    rcall('ZADD', state .. 'wake_due', now_ms, name .. '#' .. key)
  end
end
