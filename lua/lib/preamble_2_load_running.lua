-- Shared by the scripts (prepended at build time); takes no KEYS or ARGV of its own.
-- The record of `field` if it is running the given attempt, else nil. This is the fence of every
-- answer to an attempt: a late answer for an attempt that was given up on (reaped, released)
-- must not touch a job that has moved on or runs again elsewhere. With `without_argument`, as
-- load_record_without_argument loads it, with what it returns besides.
local function load_running(jobs_key, field, attempt, without_argument)
  local record, raw, from, to
  if without_argument then
    record, raw, from, to = load_record_without_argument(jobs_key, field)
  else
    record = load_record(jobs_key, field)
  end
  if not record or record[R_STATE] ~= S_RUNNING or record[R_ATTEMPTS] ~= tonumber(attempt) then
    return nil
  end
  return record, raw, from, to
end
