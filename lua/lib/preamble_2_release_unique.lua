-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ A unique job's claim given up, or parked. A job whose unique_until is started lets go of its
  claim when its first attempt begins (start_unique), but parks it, TTL and all, under a name no
  push looks at (a '!' after the prefix: names cannot hold one): an attempt given back before it
  began (releaseJob: the worker busy or unreachable, a job reserved ahead handed back) takes the
  claim back (restore_unique), since the job did not start, unless a new job took it meanwhile.
  The parked claim goes when the job ends (release_unique) or at its TTL.
]]
local function claim_names(unique_prefix, record)
  local suffix = unique_claim('', record[R_NAME], record[R_UNIQUE_KEY], record[R_ORDERING_KEY])
  return unique_prefix .. suffix, unique_prefix .. '!' .. suffix
end

-- Gives up a unique job's claim, if it still holds it (a claim past its unique_for may since be
-- another job's), parked or not.
local function release_unique(unique_prefix, record, field)
  if record[R_UNIQUE_KEY] == '' then return end
  local ordering_key = record[R_ORDERING_KEY]
  local claim, parked = claim_names(unique_prefix, record)
  if rcall('GET', claim) == field then rcall('DEL', claim) end
  if record[R_UNIQUE_UNTIL] == 1 and rcall('GET', parked) == field then rcall('DEL', parked) end
  -- A job of an ordering key pushed by a master before claims named the ordering key holds
  -- its claim under the name alone.
  if ordering_key ~= '' then
    local before = unique_claim(unique_prefix, record[R_NAME], record[R_UNIQUE_KEY])
    if rcall('GET', before) == field then rcall('DEL', before) end
  end
end

-- unique_until started, its first attempt begins: the claim is let go, parked.
local function start_unique(unique_prefix, record, field)
  if record[R_UNIQUE_KEY] == '' then return end
  local claim, parked = claim_names(unique_prefix, record)
  if rcall('GET', claim) == field then
    rcall('RENAME', claim, parked)
  else
    release_unique(unique_prefix, record, field)  -- a claim taken before claims named the key
  end
end

-- unique_until started, its first attempt given back before it began: the claim again, with
-- the TTL it had, unless another job holds it now.
local function restore_unique(unique_prefix, record, field)
  if record[R_UNIQUE_KEY] == '' or record[R_UNIQUE_UNTIL] ~= 1 then return end
  local claim, parked = claim_names(unique_prefix, record)
  if rcall('GET', parked) ~= field then return end
  if rcall('RENAMENX', parked, claim) == 0 then rcall('DEL', parked) end
end
