-- Shared by the scripts (prepended at build time); takes no KEYS or ARGV of its own.
--[[ An attempt of a constrained job ended (answered, failed, given back, reaped): its leases go,
  and each key with jobs held back lets the oldest of them try again. Nothing polls: the freed
  slot is handed on by the script that frees it.
]]
local function release_constraints(cx, cons, job_id)
  if not cons then return end
  for i = 1, #cons, 2 do
    local name, key = cons[i], cons[i + 1]
    local leases = cx.c .. 'lease:' .. name .. '#' .. key
    rcall('ZREM', leases, job_id)
    if rcall('EXISTS', leases) == 0 then rcall('SREM', cx.c .. 'lease_keys:' .. name, key) end
    -- A rate's held jobs wait for their due time (wakeConstraints), not for slots.
    local limits = constraint_limits(cx, name)
    if not limits or limits.concurrency then wake_held(cx, name, key, 1) end
  end
end
