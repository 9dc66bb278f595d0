-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- The record of `field` if it is running the given attempt, else nil. This is the fence of every
-- answer to an attempt: a late answer for an attempt that was given up on (reaped, released)
-- must not touch a job that has moved on or runs again elsewhere. `load` loads the record
-- (load_record when not given; what else it returns is returned too): a script passes
-- load_record_without_argument itself, so that only the scripts that name it carry it.
local function load_running(jobs_key, field, attempt, load)
  local record, raw, from, to = (load or load_record)(jobs_key, field)
  if not record or record[R_STATE] ~= S_RUNNING or record[R_ATTEMPTS] ~= tonumber(attempt) then
    return nil
  end
  return record, raw, from, to
end
