-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- Gives up a unique job's claim, if it still holds it (a claim past its unique_for may since be
-- another job's).
local function release_unique(unique_prefix, record, field)
  if record[R_UNIQUE_KEY] == '' then return end
  local ordering_key = record[R_ORDERING_KEY]
  local claim = unique_claim(unique_prefix, record[R_NAME], record[R_UNIQUE_KEY], ordering_key)
  if rcall('GET', claim) == field then rcall('DEL', claim) end
  -- A job of an ordering key pushed by a master before claims named the ordering key holds
  -- its claim under the name alone.
  if ordering_key ~= '' then
    local before = unique_claim(unique_prefix, record[R_NAME], record[R_UNIQUE_KEY])
    if rcall('GET', before) == field then rcall('DEL', before) end
  end
end
