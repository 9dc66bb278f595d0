-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- Gives up a unique job's claim, if it still holds it (a claim past its unique_for may since be
-- another job's).
local function release_unique(unique_prefix, record, field)
  if record[R_UNIQUE_KEY] == '' then return end
  local claim = unique_claim(unique_prefix, record[R_NAME], record[R_UNIQUE_KEY])
  if rcall('GET', claim) == field then rcall('DEL', claim) end
end
