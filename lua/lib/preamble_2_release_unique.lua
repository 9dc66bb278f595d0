-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ A unique job's claim given up, or parked. A job whose unique_until is started lets go of its
  claim when its first attempt begins (start_unique), but parks it, TTL and all, under a name no
  push looks at (a '!' after the prefix: names cannot hold one) and that is the job's own (its
  field after the '!'): an attempt given back before it began (releaseJob: the worker busy or
  unreachable, a job reserved ahead handed back) takes the claim back (restore_unique), since the
  job did not start, unless a new job holds it now. Parked under the claim's name alone (as
  builds before this one did), a new job of the same key that started meanwhile parked over it,
  and the job given back was left queued without its claim.
  The parked claim goes when the job ends (release_unique) or at its TTL.
]]
-- The claim, the job's parked claim, and the name builds before parked it under (shared by the
-- jobs of one claim).
local function claim_names(unique_prefix, record, field)
  local suffix = unique_claim('', record[R_NAME], record[R_UNIQUE_KEY], record[R_ORDERING_KEY])
  return unique_prefix .. suffix, unique_prefix .. '!' .. field .. ' ' .. suffix,
         unique_prefix .. '!' .. suffix
end

-- Gives up a unique job's claim, if it still holds it (a claim past its unique_for may since be
-- another job's), parked or not.
local function release_unique(unique_prefix, record, field)
  if record[R_UNIQUE_KEY] == '' then return end
  local ordering_key = record[R_ORDERING_KEY]
  local claim, parked, parked_before = claim_names(unique_prefix, record, field)
  if rcall('GET', claim) == field then rcall('DEL', claim) end
  if record[R_UNIQUE_UNTIL] == 1 then
    rcall('DEL', parked)
    if rcall('GET', parked_before) == field then rcall('DEL', parked_before) end
  end
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
  local claim, parked = claim_names(unique_prefix, record, field)
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
  local claim, parked, parked_before = claim_names(unique_prefix, record, field)
  if rcall('EXISTS', parked) == 0 then
    if rcall('GET', parked_before) ~= field then return end
    parked = parked_before  -- parked by a build before this one
  end
  if rcall('RENAMENX', parked, claim) == 0 then rcall('DEL', parked) end
end
