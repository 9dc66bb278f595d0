-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ The record of a new job (the R_* slots of the preamble), not attempted yet.
  job  {name, argument, priority, max_retry, keep_result (0|1), timeout_ms, unique_key,
        unique_until (0|1), ordering_key, ready_at_ms, constraints (a table, or false),
        schedule ({name, scheduled_at}, or false)}
]]
local function new_record(job, state, now_ms, stamp, traceparent, blocked_by)
  return {job.name, job.argument, job.priority, job.max_retry, job.keep_result, job.timeout_ms,
    state, 0, now_ms, stamp, '', traceparent, '', job.unique_key, job.unique_until,
    job.ordering_key, job.ready_at_ms, blocked_by, job.constraints, job.schedule}
end
